import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import type { PageRequest } from '../common/pagination/page-request';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { EventsService } from '../events/events.service';
import { OrganisersService } from '../identity/organisers.service';
import type { OrganiserResponse } from '../identity/dto/identity.dto';
import { OrdersService } from '../orders/orders.service';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { dashboardPath, withQuery } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';

const PAGE_SIZE = 50;

function pageRequest(cursor: unknown): PageRequest {
  return { limit: PAGE_SIZE, cursor: typeof cursor === 'string' && cursor !== '' ? cursor : null, updatedAfter: null };
}

/** An organiser's events (publish) and orders (confirm), paged with the keyset pager like the public lists. */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard/organisers/:organiserId')
export class DashboardEventsController {
  constructor(
    private readonly organisers: OrganisersService,
    private readonly events: EventsService,
    private readonly orders: OrdersService,
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Get('events')
  @AcceptsQuery('cursor')
  async eventList(
    @Param('organiserId') organiserId: string,
    @Query('cursor') cursor: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    const paging = pageRequest(cursor);
    const page = await this.events.list({ type: 'organiser', id: organiserId }, paging);
    const href = dashboardPath('organisers', organiserId, 'events');
    return this.pages.send(request, reply, 'events', {
      ...this.frame(organiser, 'Events'),
      page,
      pager: this.pager('Events', href, paging, page.nextCursor),
    });
  }

  @Post('events/:eventId/publish')
  async publish(
    @Param('organiserId') organiserId: string,
    @Param('eventId') eventId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    await this.organiser(organiserId);
    // Only the organiser's own events: another's is 404 here, as on the public API.
    await this.events.get({ type: 'organiser', id: organiserId }, eventId);
    try {
      const published = await this.events.publish(eventId);
      this.sessions.flash(request, { kind: 'success', text: `Event ${published.title ?? eventId} is public.` });
    } catch (error) {
      // A refusal (409) is shown on the list; not found (another organiser's) stays a 404.
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      this.sessions.flash(request, { kind: 'error', text: `Not published: ${error.message}` });
    }
    throw new DashboardRedirect(dashboardPath('organisers', organiserId, 'events'));
  }

  @Get('orders')
  @AcceptsQuery('cursor')
  async orderList(
    @Param('organiserId') organiserId: string,
    @Query('cursor') cursor: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    const paging = pageRequest(cursor);
    const page = await this.orders.listAnyStatusForOrganiser(organiserId, paging);
    const href = dashboardPath('organisers', organiserId, 'orders');
    return this.pages.send(request, reply, 'orders', {
      ...this.frame(organiser, 'Orders'),
      page,
      pager: this.pager('Orders', href, paging, page.nextCursor),
    });
  }

  @Post('orders/:orderId/confirm')
  async confirm(
    @Param('organiserId') organiserId: string,
    @Param('orderId') orderId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    await this.organiser(organiserId);
    try {
      const confirmed = await this.orders.confirmForOrganiser(organiserId, orderId);
      this.sessions.flash(request, { kind: 'success', text: `Order ${confirmed.id} is confirmed.` });
    } catch (error) {
      // A refusal (409) is shown on the list; not found (another organiser's) stays a 404.
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      this.sessions.flash(request, { kind: 'error', text: `Not confirmed: ${error.message}` });
    }
    throw new DashboardRedirect(dashboardPath('organisers', organiserId, 'orders'));
  }

  private async organiser(organiserId: string): Promise<OrganiserResponse> {
    const organiser = await this.organisers.find(organiserId);
    if (organiser === null) throw DomainError.notFound('Organiser');
    return organiser;
  }

  private frame(organiser: OrganiserResponse, what: string): Record<string, unknown> {
    const accountHref = dashboardPath('organisers', organiser.id);
    return {
      title: `${what} of ${organiser.name}`,
      organiser,
      accountHref,
      breadcrumbs: [
        { label: 'Accounts', href: dashboardPath('accounts') },
        { label: organiser.name, href: accountHref },
      ],
    };
  }

  private pager(label: string, href: string, paging: PageRequest, next: string | null) {
    return {
      label,
      firstHref: paging.cursor === null ? null : href,
      nextHref: next === null ? null : withQuery(href, { cursor: next }),
    };
  }
}
