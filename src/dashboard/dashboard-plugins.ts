import fastifyCookie from '@fastify/cookie';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { DomainError } from '../common/errors/domain-error';
import { unstorableFormProblem } from '../common/html/html-form';
import { isDashboardRoute } from '../common/http/listener';
import { DashboardSessionsService } from './dashboard-sessions.service';

export { CSRF_COOKIE, DASHBOARD_COOKIE_OPTIONS } from './dashboard-cookies';

/**
 * What the dashboard needs of Fastify, registered once from the bootstrap.
 * @fastify/cookie parses the Cookie header of every request (a few
 * microseconds; the public API never reads it). A preValidation hook on the
 * dashboard's own routes refuses, for every form at once and before its
 * handler, a field PostgreSQL's text cannot hold (a NUL), as a JSON body's
 * or a path's text is refused, with the dashboard's 400 page, rather than
 * failing in SQL as the server's fault. The onSend hook writes what a
 * dashboard request changed in its session before the answer leaves, so the
 * page a redirect leads to finds it, on whichever instance it lands; other
 * requests pass straight through. Form bodies (urlencoded) are parsed by
 * Nest's Fastify adapter already; the HTTP conventions admit them on
 * dashboard paths only.
 */
export async function registerDashboardPlugins(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyCookie, {});
  const sessions = app.get(DashboardSessionsService);
  const fastify = app.getHttpAdapter().getInstance();
  // On the dashboard's routes only (they are registered after this, at init): no other request pays for it.
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (!isDashboardRoute(route.url)) return;
    const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [...own, refuseUnstorableForm];
  });
  fastify.addHook('onSend', (request, _reply, payload, done) => {
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

function refuseUnstorableForm(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const problem = unstorableFormProblem(request.body);
  done(problem === null ? undefined : DomainError.invalidArgument(problem));
}
