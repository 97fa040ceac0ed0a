import { Controller, Get, Param, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { sharedPageAssets } from '../common/html/html-assets';
import { DashboardHtmlFilter } from './dashboard-html.filter';

interface Asset {
  body: Buffer;
  type: string;
}

/** Read once at start: the only files the dashboard serves, so no path ever reaches the file system. */
function loadAssets(): Map<string, Asset> {
  const shared = sharedPageAssets();
  return new Map<string, Asset>([
    ['dashboard.css', { body: shared.css, type: 'text/css; charset=utf-8' }],
    ['favicon.svg', { body: shared.favicon, type: 'image/svg+xml' }],
    ['copy-button.js', { body: shared.copyButton, type: 'text/javascript; charset=utf-8' }],
    ['submit-once.js', { body: shared.submitOnce, type: 'text/javascript; charset=utf-8' }],
    [
      'htmx.min.js',
      { body: readFileSync(require.resolve('htmx.org/dist/htmx.min.js')), type: 'text/javascript; charset=utf-8' },
    ],
  ]);
}

/** The stylesheet and scripts, served by the service itself (no asset from the internet); no session needed. */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('sign-in')
@Controller('internal/dashboard/assets')
export class DashboardAssetsController {
  private readonly assets = loadAssets();

  @Get(':name')
  asset(@Param('name') name: string, @Res() reply: FastifyReply): FastifyReply {
    const asset = this.assets.get(name);
    if (asset === undefined) throw DomainError.notFound('Asset');
    return reply.type(asset.type).header('cache-control', 'private, max-age=300').send(asset.body);
  }
}
