import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * How long an idle keep-alive connection stays open: longer than the idle
 * timeout of the load balancers put in front of instances (60 s on AWS's
 * ALB and in nginx's `keepalive_timeout`), so the balancer closes an idle
 * connection first and never sends a request on one this server is closing,
 * which its client would see as a 502. It is Fastify's own default, which
 * Fastify does not apply to a server made by `serverFactory`; Node's is 5 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** The node:http server of one of the service's listeners (public or admin). */
export function listenerServer(handler: RequestListener): Server {
  const server = createServer(handler);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}
