import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DashboardSessionsService } from './dashboard-sessions.service';

export { CSRF_COOKIE, DASHBOARD_COOKIE_OPTIONS } from './dashboard-cookies';

/**
 * What the dashboard needs of Fastify, registered once from the bootstrap.
 * @fastify/cookie parses the Cookie header of every request (a few
 * microseconds; the public API never reads it). The onSend hook writes what a
 * dashboard request changed in its session before the answer leaves, so the
 * page a redirect leads to finds it, on whichever instance it lands; other
 * requests pass straight through. Form bodies (urlencoded) are parsed by
 * Nest's Fastify adapter already; the HTTP conventions admit them on
 * dashboard paths only.
 */
export async function registerDashboardPlugins(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyCookie, {});
  const sessions = app.get(DashboardSessionsService);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (request, _reply, payload, done) => {
      const settling = sessions.settle(request);
      if (settling === null) {
        done(null, payload);
        return;
      }
      settling.then(
        () => done(null, payload),
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
}
