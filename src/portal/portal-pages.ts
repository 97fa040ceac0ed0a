import { Inject, Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as format from '../common/html/html-format';
import { withSharedPartials } from '../common/html/html-partials';
import { PageFocus } from '../common/html/page-focus';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { portalHeaders } from './portal-headers';
import { portalFolder } from './portal-files';
import { PORTAL_BASE, portalPath } from './portal-paths';
import { portalSessionOf } from './portal-request';
import { PortalSessionsService } from './portal-sessions.service';

/** Renders the Eta templates in `views/` (HTML-escaped by default) into complete pages. */
@Injectable()
export class PortalPages {
  private readonly eta = withSharedPartials(new Eta({ views: portalFolder('views'), cache: true, autoEscape: true }));

  private readonly headers: Record<string, string>;

  constructor(
    private readonly sessions: PortalSessionsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.headers = portalHeaders(config);
  }

  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    view: string,
    data: Record<string, unknown>,
    status = 200,
  ): Promise<FastifyReply> {
    const session = portalSessionOf(request);
    const html = this.eta.render(view, {
      breadcrumbs: [],
      ...data,
      csrf: session?.csrf_token ?? '',
      flashes: await this.sessions.takeFlashes(request),
      signedIn: session !== null,
      readOnly: session?.read_only ?? true,
      base: PORTAL_BASE,
      path: portalPath,
      format,
      focus: new PageFocus(),
    });
    // Time from the request's arrival to the rendered page, for the benchmark and the browser's network panel.
    void reply.header('server-timing', `page;dur=${reply.elapsedTime.toFixed(1)}`);
    // The portal's own headers (no-store, CSP, framing) are set on every /portal response (portal-headers.ts), and
    // here too: the page the router's own refusals get (a URL it cannot read) is sent where no hook runs.
    return reply.status(status).headers(this.headers).type('text/html; charset=utf-8').send(html);
  }
}
