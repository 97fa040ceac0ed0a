import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ReadinessService } from './readiness.service';

/**
 * `/healthz` and `/readyz` as plain Fastify routes, not Nest controllers: no
 * guard, interceptor or rate budget ever sees them, they need no
 * credential, and their per-request log line is off (`logLevel: silent`), so
 * a platform probing every few seconds neither fills the log nor spends a
 * budget. Both listeners serve them (the listener split names these paths).
 *
 * Also here, because it is readiness's other half: once shutdown has begun,
 * every response carries `Connection: close` (those to requests that were
 * already under way included), so keep-alive clients finish the request
 * they sent and open their next connection elsewhere.
 */
export function installHealthRoutes(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const readiness = app.get(ReadinessService);

  fastify.get('/healthz', { logLevel: 'silent' }, async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  fastify.get('/readyz', { logLevel: 'silent' }, async (_request, reply) => {
    const { ready, checks } = await readiness.check();
    void reply.header('cache-control', 'no-store').status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', checks };
  });

  // When the answer is sent, not when the request came: one already under way when the drain began says it too.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (readiness.isShuttingDown) void reply.header('connection', 'close');
    done(null, payload);
  });
}
