import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * The node:http server of one of the service's listeners (public or admin).
 * An idle keep-alive connection stays open `keepAliveTimeoutMs`
 * (KEEP_ALIVE_TIMEOUT_SECONDS, 72 s by default): longer than the idle timeout
 * of the load balancer in front (60 s on AWS's ALB and in nginx's
 * `keepalive_timeout`), so the balancer closes an idle connection first and
 * never sends a request on one this server is closing, which its client would
 * see as a 502. 72 s is Fastify's own default, which Fastify does not apply to
 * a server made by `serverFactory`; Node's is 5 s.
 */
export function listenerServer(handler: RequestListener, keepAliveTimeoutMs: number): Server {
  const server = createServer(handler);
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
}
