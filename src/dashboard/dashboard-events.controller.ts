import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { HtmlForm, inLabelWords, type FieldLabels } from '../common/html/html-form';
import { instantFieldText } from '../common/html/html-format';
import type { PageRequest } from '../common/pagination/page-request';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { requestContextOf } from '../common/request-id/request-context';
import { EventsService } from '../events/events.service';
import { OrganisersService } from '../identity/organisers.service';
import type { OrganiserResponse } from '../identity/dto/identity.dto';
import { CreateOrderDto, UpdateOrderDto } from '../orders/dto/order.dto';
import { OrdersService } from '../orders/orders.service';
import { validatedInternalBody } from '../common/validation/validation.pipe';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { dashboardPath, withQuery } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';

const PAGE_SIZE = 50;

/** The forms' labels (events.eta, orders.eta) for the fields the internal API's refusals name. */
const EVENT_LABELS: FieldLabels = { 'title.EN': 'Title', title: 'Title', startTime: 'Start', visibility: 'Visibility' };
const BILLING_LABELS: FieldLabels = {
  billingName: 'Billing name',
  billingEmail: 'Billing email',
  attributionSource: 'Attribution source',
};
const ORDER_LABELS: FieldLabels = {
  eventId: 'Event id',
  status: 'Status',
  'lineItems.0.quantity': 'Quantity',
  'lineItems.0.unitAmountMinor': 'Unit amount',
  lineItems: 'Quantity',
  totalAmountMinor: 'Total amount',
  currency: 'Currency',
  ...BILLING_LABELS,
};

interface OrganiserList {
  list: 'events' | 'orders';
  title: string;
}

/** A hard delete is posted with its confirm box ticked; without it, nothing is deleted. */
function confirmed(request: FastifyRequest): void {
  if (!new HtmlForm(request).checked('confirm')) {
    throw DomainError.invalidArgument('tick “I mean it” to confirm; nothing was deleted');
  }
}

function pageRequest(cursor: unknown): PageRequest {
  return { limit: PAGE_SIZE, cursor: typeof cursor === 'string' && cursor !== '' ? cursor : null, updatedAfter: null };
}

/**
 * An organiser's events (create, publish, touch, delete) and orders (create,
 * confirm, rewrite billing, delete), paged with the keyset pager like the
 * public lists.
 */
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
    return this.listPage({ request, reply, organiserId, cursor, list: 'events', title: 'Events' }, (paging) =>
      this.events.list({ type: 'organiser', id: organiserId }, paging),
    );
  }

  /** A new event of this organiser, as `POST /internal/events` makes it (any visibility, no public rule). */
  @Post('events')
  async createEvent(@Param('organiserId') organiserId: string, @Req() request: FastifyRequest): Promise<never> {
    const form = new HtmlForm(request);
    const title = form.text('title');
    const startText = form.text('startTime');
    const startTime = startText === null ? null : instantFieldText(startText);
    const visibility = form.text('visibility');
    return this.act(
      { request, organiserId, list: 'events', refused: 'Not created', labels: EVENT_LABELS },
      async () => {
        // The internal API may make an event without a start (fixtures); the list here shows none such, so one made
        // from this form could never be found again.
        if (startTime === null) {
          throw DomainError.invalidArgument('Start is required: the events list shows only events with a start time.');
        }
        const created = await this.events.createInternal(
          organiserId,
          {
            ...(title === null ? {} : { title: { EN: title } }),
            startTime,
            ...(visibility === null ? {} : { visibility }),
          },
          requestContextOf(request).traceId,
        );
        return `Event ${created.title ?? created.id} created (${created.visibility}).`;
      },
    );
  }

  @Post('events/:eventId/publish')
  async publish(
    @Param('organiserId') organiserId: string,
    @Param('eventId') eventId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const action = {
      request,
      organiserId,
      list: 'events' as const,
      refused: 'Not published',
      // Only the organiser's own events: another's is 404 here, as on the public API.
      owned: () => this.events.get({ type: 'organiser', id: organiserId }, eventId),
    };
    return this.act(action, async () => {
      const published = await this.events.publish(eventId, requestContextOf(request).traceId);
      return `Event ${published.title ?? eventId} is public.`;
    });
  }

  @Post('events/:eventId/touch')
  async touch(
    @Param('organiserId') organiserId: string,
    @Param('eventId') eventId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const owned = () => this.events.get({ type: 'organiser', id: organiserId }, eventId);
    return this.act({ request, organiserId, list: 'events', refused: 'Not touched', owned }, async () => {
      const touched = await this.events.touch(eventId);
      return `Event ${touched.title ?? eventId} touched: only its updatedAt moved.`;
    });
  }

  @Post('events/:eventId/delete')
  async deleteEvent(
    @Param('organiserId') organiserId: string,
    @Param('eventId') eventId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const owned = () => this.events.get({ type: 'organiser', id: organiserId }, eventId);
    return this.act({ request, organiserId, list: 'events', refused: 'Not deleted', owned }, async () => {
      confirmed(request);
      await this.events.delete(eventId);
      return `Event ${eventId} deleted.`;
    });
  }

  @Get('orders')
  @AcceptsQuery('cursor')
  async orderList(
    @Param('organiserId') organiserId: string,
    @Query('cursor') cursor: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    return this.listPage({ request, reply, organiserId, cursor, list: 'orders', title: 'Orders' }, (paging) =>
      this.orders.listAnyStatusForOrganiser(organiserId, paging),
    );
  }

  @Post('orders/:orderId/confirm')
  async confirm(
    @Param('organiserId') organiserId: string,
    @Param('orderId') orderId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    return this.act({ request, organiserId, list: 'orders', refused: 'Not confirmed' }, async () => {
      const confirmed = await this.orders.confirmForOrganiser(organiserId, orderId, requestContextOf(request).traceId);
      return `Order ${confirmed.id} is confirmed.`;
    });
  }

  /** A new order of one of this organiser's events, as `POST /internal/orders` makes it (one line item). */
  @Post('orders')
  async createOrder(@Param('organiserId') organiserId: string, @Req() request: FastifyRequest): Promise<never> {
    const form = new HtmlForm(request);
    const whole = (name: string): number | null => {
      const text = form.text(name);
      return text === null ? null : /^\d{1,15}$/.test(text) ? Number(text) : NaN;
    };
    const eventId = form.text('eventId') ?? '';
    return this.act(
      { request, organiserId, list: 'orders', refused: 'Not created', labels: ORDER_LABELS },
      async () => {
        if (!(await this.events.isOwnedBy(eventId, organiserId))) {
          throw DomainError.invalidArgument(`${eventId || 'That event'} is not an event of this organiser`);
        }
        const unitAmountMinor = whole('unitAmountMinor');
        const body = await validatedInternalBody(
          {
            eventId,
            status: form.text('status'),
            lineItems: [{ quantity: whole('quantity'), ...(unitAmountMinor === null ? {} : { unitAmountMinor }) }],
            totalAmountMinor: whole('totalAmountMinor'),
            currency: form.text('currency'),
            billingName: form.text('billingName'),
            billingEmail: form.text('billingEmail'),
          },
          CreateOrderDto,
        );
        const created = await this.orders.create(body, requestContextOf(request).traceId);
        return `Order ${created.id} created (${created.status}).`;
      },
    );
  }

  /** Rewrites an order's billing fields, as `PATCH /internal/orders/{id}` does: updatedAt moves, nothing is sent. */
  @Post('orders/:orderId/billing')
  async rewriteBilling(
    @Param('organiserId') organiserId: string,
    @Param('orderId') orderId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const form = new HtmlForm(request);
    const owned = () => this.orders.assertOrganiserOwnsOrder(organiserId, orderId);
    const action = {
      request,
      organiserId,
      list: 'orders' as const,
      refused: 'Not changed',
      owned,
      labels: BILLING_LABELS,
    };
    return this.act(action, async () => {
      // An emptied field clears it (null), as the internal API's null does.
      const body = await validatedInternalBody(
        {
          billingName: form.text('billingName'),
          billingEmail: form.text('billingEmail'),
          attributionSource: form.text('attributionSource'),
        },
        UpdateOrderDto,
      );
      await this.orders.rewrite(orderId, body);
      return `Order ${orderId}: billing details saved.`;
    });
  }

  @Post('orders/:orderId/delete')
  async deleteOrder(
    @Param('organiserId') organiserId: string,
    @Param('orderId') orderId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const owned = () => this.orders.assertOrganiserOwnsOrder(organiserId, orderId);
    return this.act({ request, organiserId, list: 'orders', refused: 'Not deleted', owned }, async () => {
      confirmed(request);
      await this.orders.delete(orderId);
      return `Order ${orderId} deleted.`;
    });
  }

  /** One page of an organiser's list (its view is named after the list), with first/next links. */
  private async listPage(
    page: { request: FastifyRequest; reply: FastifyReply; organiserId: string; cursor: unknown } & OrganiserList,
    load: (paging: PageRequest) => Promise<{ nextCursor: string | null }>,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(page.organiserId);
    const paging = pageRequest(page.cursor);
    const rows = await load(paging);
    const href = dashboardPath('organisers', page.organiserId, page.list);
    return this.pages.send(page.request, page.reply, page.list, {
      ...this.frame(organiser, page.title),
      page: rows,
      pager: this.pager(page.title, href, paging, rows.nextCursor),
    });
  }

  /**
   * Runs an action on one of the organiser's rows and returns to its list
   * with a flash: the success text, or a refusal (409 and other 4xx) shown on
   * the list. Not found (another organiser's row) stays a 404.
   */
  private async act(
    action: {
      request: FastifyRequest;
      organiserId: string;
      list: OrganiserList['list'];
      refused: string;
      /** Checks the row is the organiser's before the action; its refusal is the page's, not a flash. */
      owned?: () => Promise<unknown>;
      /** The form's labels, for a refusal that names the fields it filled in. */
      labels?: FieldLabels;
    },
    run: () => Promise<string>,
  ): Promise<never> {
    await this.organiser(action.organiserId);
    await action.owned?.();
    try {
      this.sessions.flash(action.request, { kind: 'success', text: await run() });
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      const refusal = inLabelWords(error.message, action.labels ?? {});
      this.sessions.flash(action.request, { kind: 'error', text: `${action.refused}: ${refusal}` });
    }
    throw new DashboardRedirect(dashboardPath('organisers', action.organiserId, action.list));
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
