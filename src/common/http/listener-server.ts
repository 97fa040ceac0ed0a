import { createServer, type RequestListener, type Server } from 'node:http';
import { answerClientError, answerUnmetExpectation } from './client-error';

/**
 * The node:http server of one of the service's listeners (public or admin).
 * An idle keep-alive connection stays open `keepAliveTimeoutMs`
 * (KEEP_ALIVE_TIMEOUT_SECONDS, 72 s by default): longer than the idle timeout
 * of the load balancer in front (60 s on AWS's ALB and in nginx's
 * `keepalive_timeout`), so the balancer closes an idle connection first and
 * never sends a request on one this server is closing, which its client would
 * see as a 502. 72 s is Fastify's own default, which Fastify does not apply to
 * a server made by `serverFactory`; Node's is 5 s. Requests Node's parser
 * refuses, and an `Expect` it cannot meet, are answered in the contract's
 * error body (client-error.ts).
 */
export function listenerServer(handler: RequestListener, keepAliveTimeoutMs: number): Server {
  // A missing Host is refused by the conventions hook, in the contract's error body; Node's own 400 has none.
  const server = createServer({ requireHostHeader: false }, handler);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  return server;
}

/**
 * Fastify's `clientErrorHandler` for the server `listenerServer` made: that
 * server already answers client errors (above, for both listeners alike), and a
 * second answer on the same socket would corrupt the first.
 */
export function clientErrorsAnsweredByListener(): void {}
