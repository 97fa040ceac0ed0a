import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unstorableTextProblem } from '../../libs/json/json-shape';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import type { Page } from '../common/envelope/page';
import { ErrorCode } from '../common/errors/error-code';
import {
  HtmlForm,
  refusalByField,
  type FieldLabels,
  type FieldPaths,
  type FormRefusal,
} from '../common/html/html-form';
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

/**
 * A cursor as the keyset pager writes one: base64url, a dot, base64url, 512
 * characters at most. A page's forms post its cursor back; only one of this
 * shape is put into the address the action returns to, after the page's own
 * path, so no form can send the browser anywhere else.
 */
const CURSOR_SHAPE = /^[\w-]+\.[\w-]+$/;
const MAX_CURSOR_LENGTH = 512;

/** The forms' labels (events.eta, orders.eta) for the fields the internal API's refusals name. */
const EVENT_LABELS: FieldLabels = { 'title.EN': 'Title', title: 'Title', startTime: 'Start', visibility: 'Visibility' };
const EVENT_FIELDS: FieldPaths = {
  'title.EN': 'title',
  title: 'title',
  startTime: 'startTime',
  visibility: 'visibility',
};
const BILLING_LABELS: FieldLabels = {
  billingName: 'Billing name',
  billingEmail: 'Billing email',
  attributionSource: 'Attribution source',
};
const BILLING_FIELDS: FieldPaths = {
  billingName: 'billingName',
  billingEmail: 'billingEmail',
  attributionSource: 'attributionSource',
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
const ORDER_FIELDS: FieldPaths = {
  eventId: 'eventId',
  status: 'status',
  'lineItems.0.quantity': 'quantity',
  'lineItems.0.unitAmountMinor': 'unitAmountMinor',
  lineItems: 'quantity',
  totalAmountMinor: 'totalAmountMinor',
  currency: 'currency',
  billingName: 'billingName',
  billingEmail: 'billingEmail',
};

type ListName = 'events' | 'orders';

/** A page of either list: the rows each carry their id. */
type ListRows = Page<{ id: string }>;

const LIST_TITLES: Record<ListName, string> = { events: 'Events', orders: 'Orders' };

/** What a page says when the cursor of the link that led to it names no page any more. */
function pageGone(list: ListName): string {
  return `The page of ${list} that link led to is gone (the ${list === 'events' ? 'event' : 'order'} it continued from was deleted, or the link is out of date): this is the first page.`;
}

/** What a refused form shows: what was typed, each refusal beside its field, and what names no field at its top. */
interface RefusedForm {
  form: Record<string, string | null>;
  errors: Record<string, string>;
  refusal: string | null;
}

/** `outcome` ("Not created") leads what names no field: said at the form's top, it needs to say nothing was done. */
function refusedForm(form: Record<string, string | null>, refusal: FormRefusal, outcome: string): RefusedForm {
  return { form, errors: refusal.fields, refusal: refusal.form === null ? null : `${outcome}: ${refusal.form}` };
}

/** Refusals a form is shown again with; a missing row (404) and the server's own failures are not. */
function isFormRefusal(error: unknown): error is DomainError {
  return error instanceof DomainError && error.status < 500 && error.status !== 404;
}

/** A hard delete is posted with its confirm box ticked; without it, nothing is deleted. */
function confirmed(request: FastifyRequest): void {
  if (!new HtmlForm(request).checked('confirm')) {
    throw DomainError.invalidArgument('tick “I mean it” to confirm; nothing was deleted');
  }
}

function pageRequest(cursor: string | null): PageRequest {
  return { limit: PAGE_SIZE, cursor, updatedAfter: null };
}

function listPath(organiserId: string, list: ListName): string {
  return dashboardPath('organisers', organiserId, list);
}

/**
 * Where a form posted from a page of a list returns (Post/Redirect/Get): to
 * that page, when the form carried a cursor of the pager's shape; else the
 * first page.
 */
function pageOfForm(organiserId: string, list: ListName, form: HtmlForm): string {
  return withQuery(listPath(organiserId, list), { cursor: cursorOfForm(form) });
}

function cursorOfForm(form: HtmlForm): string | null {
  const cursor = form.text('cursor');
  return cursor !== null && cursor.length <= MAX_CURSOR_LENGTH && CURSOR_SHAPE.test(cursor) ? cursor : null;
}

/**
 * An organiser's events (create, publish, touch, delete) and orders (create,
 * confirm, rewrite billing, delete), paged with the keyset pager like the
 * public lists. Every form carries the cursor of the page it is on, so its
 * action returns to that page; a refused form is shown again on it.
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
  eventList(
    @Param('organiserId') organiserId: string,
    @Query('cursor') cursor: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    return this.listPage(request, reply, organiserId, 'events', cursor);
  }

  /** A new event of this organiser, as `POST /internal/events` makes it (any visibility, no public rule). */
  @Post('events')
  async createEvent(
    @Param('organiserId') organiserId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    const form = new HtmlForm(request);
    const typed = { title: form.text('title'), startTime: form.text('startTime'), visibility: form.text('visibility') };
    try {
      // The internal API may make an event without a start (fixtures); the list here shows none such, so one made
      // from this form could never be found again.
      if (typed.startTime === null) {
        throw DomainError.invalidArgument(
          'startTime is required: the events list shows only events with a start time.',
        );
      }
      const created = await this.events.createInternal(
        organiserId,
        {
          ...(typed.title === null ? {} : { title: { EN: typed.title } }),
          startTime: instantFieldText(typed.startTime),
          ...(typed.visibility === null ? {} : { visibility: typed.visibility }),
        },
        requestContextOf(request).traceId,
      );
      this.sessions.flash(request, {
        kind: 'success',
        text: `Event ${created.title ?? created.id} created (${created.visibility}).`,
      });
    } catch (error) {
      if (!isFormRefusal(error)) throw error;
      const refusal = refusalByField(error.message, EVENT_FIELDS, EVENT_LABELS);
      return this.formRefused(request, reply, organiser, 'events', form, error.status, {
        newEvent: refusedForm(typed, refusal, 'Not created'),
      });
    }
    throw new DashboardRedirect(pageOfForm(organiserId, 'events', form));
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
  orderList(
    @Param('organiserId') organiserId: string,
    @Query('cursor') cursor: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    return this.listPage(request, reply, organiserId, 'orders', cursor);
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
  async createOrder(
    @Param('organiserId') organiserId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    const form = new HtmlForm(request);
    const typed = {
      eventId: form.text('eventId'),
      status: form.text('status'),
      quantity: form.text('quantity'),
      unitAmountMinor: form.text('unitAmountMinor'),
      totalAmountMinor: form.text('totalAmountMinor'),
      currency: form.text('currency'),
      billingName: form.text('billingName'),
      billingEmail: form.text('billingEmail'),
    };
    const whole = (text: string | null): number | null =>
      text === null ? null : /^\d{1,15}$/.test(text) ? Number(text) : NaN;
    try {
      const eventId = typed.eventId ?? '';
      if (!(await this.events.isOwnedBy(eventId, organiserId))) {
        throw DomainError.invalidArgument(
          eventId === '' ? 'eventId is required.' : `eventId ${eventId} is not an event of this organiser.`,
        );
      }
      const unitAmountMinor = whole(typed.unitAmountMinor);
      const body = await validatedInternalBody(
        {
          eventId,
          status: typed.status,
          lineItems: [{ quantity: whole(typed.quantity), ...(unitAmountMinor === null ? {} : { unitAmountMinor }) }],
          totalAmountMinor: whole(typed.totalAmountMinor),
          currency: typed.currency,
          billingName: typed.billingName,
          billingEmail: typed.billingEmail,
        },
        CreateOrderDto,
      );
      const created = await this.orders.create(body, requestContextOf(request).traceId);
      this.sessions.flash(request, { kind: 'success', text: `Order ${created.id} created (${created.status}).` });
    } catch (error) {
      if (!isFormRefusal(error)) throw error;
      const refusal = refusalByField(error.message, ORDER_FIELDS, ORDER_LABELS);
      return this.formRefused(request, reply, organiser, 'orders', form, error.status, {
        newOrder: refusedForm(typed, refusal, 'Not created'),
      });
    }
    throw new DashboardRedirect(pageOfForm(organiserId, 'orders', form));
  }

  /** Rewrites an order's billing fields, as `PATCH /internal/orders/{id}` does: updatedAt moves, nothing is sent. */
  @Post('orders/:orderId/billing')
  async rewriteBilling(
    @Param('organiserId') organiserId: string,
    @Param('orderId') orderId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    await this.orders.assertOrganiserOwnsOrder(organiserId, orderId);
    const form = new HtmlForm(request);
    // An emptied field clears it (null), as the internal API's null does.
    const typed = {
      billingName: form.text('billingName'),
      billingEmail: form.text('billingEmail'),
      attributionSource: form.text('attributionSource'),
    };
    try {
      await this.orders.rewrite(orderId, await validatedInternalBody(typed, UpdateOrderDto));
      this.sessions.flash(request, { kind: 'success', text: `Order ${orderId}: billing details saved.` });
    } catch (error) {
      if (!isFormRefusal(error)) throw error;
      const refusal = refusalByField(error.message, BILLING_FIELDS, BILLING_LABELS);
      return this.formRefused(request, reply, organiser, 'orders', form, error.status, {
        billing: {
          orderId,
          ...refusedForm(typed, refusal, 'Not changed'),
          unseen: `Order ${orderId} not changed: ${[...Object.values(refusal.fields), refusal.form ?? ''].join(' ').trim()}`,
        },
      });
    }
    throw new DashboardRedirect(pageOfForm(organiserId, 'orders', form));
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

  /**
   * One page of an organiser's list (its view is named after the list), with
   * first/next links. A cursor that names no page any more (its row deleted,
   * or the link out of date) leads to the first page, which says so.
   */
  private async listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    organiserId: string,
    list: ListName,
    cursor: unknown,
  ): Promise<FastifyReply> {
    const organiser = await this.organiser(organiserId);
    const asked = typeof cursor === 'string' && cursor !== '' ? cursor : null;
    // Text PostgreSQL could not hold is refused as in any other query value, not taken for a link out of date.
    const unstorable = asked === null ? null : unstorableTextProblem(asked);
    if (unstorable !== null) throw DomainError.invalidArgument(`The page’s cursor ${unstorable}.`);
    const rows = await this.rowsAt(organiserId, list, asked);
    if (rows === null) {
      // A HEAD shows nothing, so it leaves the message for the GET that follows the same link.
      if (request.method === 'GET') this.sessions.flash(request, { kind: 'error', text: pageGone(list) });
      throw new DashboardRedirect(listPath(organiserId, list));
    }
    return this.send(request, reply, organiser, list, asked, rows, {}, 200);
  }

  /**
   * A refused form, shown again on the page of the list it was posted from,
   * with the refusal's status (Post/Redirect/Get is for what was done:
   * nothing was). On its first page when that page is gone.
   */
  private async formRefused(
    request: FastifyRequest,
    reply: FastifyReply,
    organiser: OrganiserResponse,
    list: ListName,
    form: HtmlForm,
    status: number,
    refused: {
      newEvent?: RefusedForm;
      newOrder?: RefusedForm;
      /** `unseen`: what is said above the list instead when the order is not on the page shown. */
      billing?: RefusedForm & { orderId: string; unseen: string };
    },
  ): Promise<FastifyReply> {
    let cursor = cursorOfForm(form);
    let rows = await this.rowsAt(organiser.id, list, cursor);
    if (rows === null) {
      this.sessions.flash(request, { kind: 'error', text: pageGone(list) });
      cursor = null;
      rows = await this.load(organiser.id, list, null);
    }
    const billing = refused.billing;
    // The billing form is in its order's row: if the order is not on this page, its refusal is said above the list.
    if (billing !== undefined && !rows.items.some((order) => order.id === billing.orderId)) {
      this.sessions.flash(request, { kind: 'error', text: billing.unseen });
    }
    return this.send(request, reply, organiser, list, cursor, rows, refused, status);
  }

  /** The rows of a page of the list, or null when its cursor names no page any more. */
  private async rowsAt(organiserId: string, list: ListName, cursor: string | null): Promise<ListRows | null> {
    try {
      return await this.load(organiserId, list, cursor);
    } catch (error) {
      if (cursor !== null && error instanceof DomainError && error.code === ErrorCode.InvalidCursor) return null;
      throw error;
    }
  }

  private load(organiserId: string, list: ListName, cursor: string | null): Promise<ListRows> {
    const paging = pageRequest(cursor);
    return list === 'events'
      ? this.events.list({ type: 'organiser', id: organiserId }, paging)
      : this.orders.listAnyStatusForOrganiser(organiserId, paging);
  }

  private send(
    request: FastifyRequest,
    reply: FastifyReply,
    organiser: OrganiserResponse,
    list: ListName,
    cursor: string | null,
    rows: ListRows,
    refused: Record<string, unknown>,
    status: number,
  ): FastifyReply {
    const href = listPath(organiser.id, list);
    return this.pages.send(
      request,
      reply,
      list,
      {
        ...this.frame(organiser, LIST_TITLES[list]),
        page: rows,
        // Carried by the page's forms, so each action returns to this page.
        cursor,
        pager: {
          label: LIST_TITLES[list],
          firstHref: cursor === null ? null : href,
          nextHref: rows.nextCursor === null ? null : withQuery(href, { cursor: rows.nextCursor }),
        },
        newEvent: { form: {}, errors: {}, refusal: null },
        newOrder: { form: {}, errors: {}, refusal: null },
        billing: null,
        ...refused,
      },
      status,
    );
  }

  /**
   * Runs a button's action on one of the organiser's rows and returns to the
   * page of the list it was posted from with a flash: the success text, or a
   * refusal (409 and other 4xx), which names no field. Not found (another
   * organiser's row) stays a 404.
   */
  private async act(
    action: {
      request: FastifyRequest;
      organiserId: string;
      list: ListName;
      refused: string;
      /** Checks the row is the organiser's before the action; its refusal is the page's, not a flash. */
      owned?: () => Promise<unknown>;
    },
    run: () => Promise<string>,
  ): Promise<never> {
    await this.organiser(action.organiserId);
    await action.owned?.();
    try {
      this.sessions.flash(action.request, { kind: 'success', text: await run() });
    } catch (error) {
      if (!isFormRefusal(error)) throw error;
      this.sessions.flash(action.request, { kind: 'error', text: `${action.refused}: ${error.message}` });
    }
    throw new DashboardRedirect(pageOfForm(action.organiserId, action.list, new HtmlForm(action.request)));
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
}
