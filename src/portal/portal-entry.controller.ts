import { Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PortalRoute } from '../common/auth-context/portal-access';
import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-code';
import { AcceptsQuery, IgnoresQuery } from '../common/query/accepts-query.decorator';
import { sharedPageAssets } from '../common/html/html-assets';
import type { ErrorBody } from '../common/errors/error-body';
import type { LinkRefusal } from './portal-access.repository';
import { portalFolder } from './portal-files';
import { PortalHtmlFilter } from './portal-html.filter';
import { PortalLinksService } from './portal-links.service';
import { PortalPages } from './portal-pages';
import { portalPath } from './portal-paths';
import { portalSessionOf } from './portal-request';
import { PortalSessionsService } from './portal-sessions.service';
import { PortalSubscriptionViews } from './portal-subscription-views.service';

interface Asset {
  body: Buffer;
  type: string;
}

/** Read once at start: the only files the portal serves, so no path ever reaches the file system. */
function loadAssets(): Map<string, Asset> {
  const script = 'text/javascript; charset=utf-8';
  // One look for the portal and the dashboard, kept in one stylesheet.
  const shared = sharedPageAssets();
  return new Map<string, Asset>([
    ['portal.css', { body: shared.css, type: 'text/css; charset=utf-8' }],
    ['favicon.svg', { body: shared.favicon, type: 'image/svg+xml' }],
    ['portal.js', { body: readFileSync(join(portalFolder('assets'), 'portal.js')), type: script }],
    ['copy-button.js', { body: shared.copyButton, type: script }],
    ['submit-once.js', { body: shared.submitOnce, type: script }],
    ['htmx.min.js', { body: readFileSync(require.resolve('htmx.org/dist/htmx.min.js')), type: script }],
  ]);
}

const REFUSALS: Record<LinkRefusal, string> = {
  used: 'This link has already been opened. A portal link opens once.',
  expired: 'This link has expired.',
  revoked: 'This link has been revoked.',
  unknown: 'This link is not valid: it may be mistyped or incomplete.',
};

function isRefusal(value: unknown): value is LinkRefusal {
  return typeof value === 'string' && Object.hasOwn(REFUSALS, value);
}

/**
 * What a browser reaches without a session: the page a link opens (its
 * script exchanges the fragment's token), the exchange itself, the page
 * that says why a link did not open, and the static files.
 */
@ApiExcludeController()
@UseFilters(PortalHtmlFilter)
@PortalRoute('entry')
@Controller('portal')
export class PortalEntryController {
  private readonly assets = loadAssets();

  constructor(
    private readonly links: PortalLinksService,
    private readonly sessions: PortalSessionsService,
    private readonly pages: PortalPages,
    private readonly views: PortalSubscriptionViews,
  ) {}

  /**
   * A link's query (a mail tracker's, or PORTAL_URL's own) is ignored: only the fragment's token counts.
   * A browser already signed in is asked before a link replaces its session: anyone holding a link of their
   * own account could otherwise send it to a person using the portal, who would be signed out of theirs and
   * into the sender's without a word (and might, say, rotate a secret the sender then reads).
   */
  @Get()
  @IgnoresQuery()
  async open(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const session = portalSessionOf(request);
    const signedInAs =
      session === null ? null : await this.views.accountName({ type: session.account_type, id: session.account_id });
    return this.pages.send(request, reply, 'open', { title: 'Opening the webhook portal', signedInAs });
  }

  /**
   * Exchanges a link's token for a session cookie. JSON only, from this
   * origin only: a form on another site can post neither. A browser names
   * the origin of every POST, the portal's own script's included, so a
   * request without one did not come from the portal's page. A link someone
   * else sent still opens through the portal's own page, which asks first
   * when the browser is signed in already (open()). A refusal here comes
   * before the link is looked at, so it uses nothing up.
   */
  @Post('session')
  @HttpCode(200)
  async exchange(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const origin = request.headers.origin;
    const contentType = request.headers['content-type'] ?? '';
    if (!/^application\/json\s*(?:;|$)/i.test(contentType) || origin === undefined || !sameHost(origin, request)) {
      throw new DomainError(ErrorCode.Forbidden, 'A portal link is opened by the portal page itself.');
    }
    const body = request.body as Record<string, unknown> | undefined;
    const token = body?.['token'];
    const opened =
      typeof token === 'string' && /^[A-Za-z0-9_-]{1,200}$/.test(token)
        ? await this.links.open(token, portalSessionOf(request)?.id ?? null)
        : { refused: 'unknown' as const };
    // The page the script goes to next travels in `Location`; a refusal's body is the error body of every JSON answer.
    if ('refused' in opened) {
      const location = `${portalPath('link-refused')}?reason=${opened.refused}`;
      const refusal: ErrorBody = {
        error: 'link_refused',
        message: REFUSALS[opened.refused],
        request_id: String(request.id),
      };
      return reply.status(410).header('location', location).send(refusal);
    }
    this.sessions.setCookie(reply, opened.sessionToken);
    const location = portalPath('subscriptions');
    return reply.status(200).header('location', location).send({ location });
  }

  @Get('link-refused')
  @AcceptsQuery('reason')
  refused(
    @Query('reason') reason: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const message = REFUSALS[isRefusal(reason) ? reason : 'unknown'];
    return this.pages.send(request, reply, 'refused', { title: 'This link does not open', message }, 410);
  }

  @Get('signed-out')
  signedOut(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    return this.pages.send(request, reply, 'signed-out', { title: 'Signed out' });
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() reply: FastifyReply): FastifyReply {
    const asset = this.assets.get(name);
    if (asset === undefined) throw DomainError.notFound('Asset');
    return reply.type(asset.type).send(asset.body);
  }
}

/**
 * The page's origin against the host the browser reached: Fastify's
 * `request.host`, which is `X-Forwarded-Host` when the peer is one of
 * TRUSTED_PROXIES (a proxy that rewrites `Host` to its upstream's name) and
 * the `Host` header otherwise.
 */
function sameHost(origin: string, request: FastifyRequest): boolean {
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}
