import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { answerClientError, answerUnmetExpectation } from './client-error';
import { closeAfterUntrustedFraming } from './request-framing';

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
  const checked: RequestListener = (request, response) => {
    closeAfterUntrustedFraming(request, response);
    handler(request, response);
  };
  const server = createServer({ requireHostHeader: false }, checked);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  // Node would answer `100 Continue` at once, inviting the body of a request about to be refused (a bad key, no
  // route): the request is handled as any other, and asked for its body once accepted (askForBodiesOnceAccepted).
  server.on('checkContinue', (request: IncomingMessage, response) => {
    continueAsked.add(request);
    checked(request, response);
  });
  return server;
}

/** Requests that sent `Expect: 100-continue` and wait for `100 Continue` before their body. */
const continueAsked = new WeakSet<IncomingMessage>();

/**
 * Answers `100 Continue` to a request that asked for it once nothing before
 * its body refuses it: after the key, the route and the account budget (the
 * `preParsing` hooks added before this one), and unless the body it declares
 * is over the route's limit (refused `413` from its Content-Length, unsent).
 * Added after every other `preParsing` hook.
 */
export function askForBodiesOnceAccepted(fastify: FastifyInstance): void {
  fastify.addHook('preParsing', (request, reply, payload, done) => {
    if (continueAsked.has(request.raw) && !reply.raw.headersSent) {
      const declared = Number(request.headers['content-length']);
      if (!(declared > request.routeOptions.bodyLimit)) reply.raw.writeContinue();
    }
    done(null, payload);
  });
}

/**
 * Fastify's `clientErrorHandler` for the server `listenerServer` made: that
 * server already answers client errors (above, for both listeners alike), and a
 * second answer on the same socket would corrupt the first.
 */
export function clientErrorsAnsweredByListener(): void {}
