import { Controller, Get, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unstorableTextProblem } from '../../libs/json/json-shape';
import { DashboardRoute } from '../common/auth-context/dashboard-access';
import { DomainError } from '../common/errors/domain-error';
import { AcceptsQuery } from '../common/query/accepts-query.decorator';
import { OrganisersService } from '../identity/organisers.service';
import { CreateLocationDto, CreateVenueDto } from '../venues/dto/venue.dto';
import { VenuesService } from '../venues/venues.service';
import { DashboardAccountViews } from './dashboard-account-views.service';
import { HtmlForm, filled, validateAs } from '../common/html/html-form';
import { DashboardHtmlFilter } from './dashboard-html.filter';
import { DashboardPages } from './dashboard-pages';
import { dashboardPath, withQuery } from './dashboard-paths';
import { DashboardRedirect } from './dashboard-redirect';
import { DashboardSessionsService } from './dashboard-sessions.service';
import { madePortalLinkOf, type MadePortalLink } from './made-portal-link';

const LIST_LIMIT = 25;
const ACCOUNTS = dashboardPath('accounts');

/** The location fields' labels (location-fields.eta), and the venue form's name. */
const LOCATION_LABELS = {
  displayName: 'Display name',
  address: 'Address',
  city: 'City',
  country: 'Country',
  timeZone: 'Time zone',
} as const;
const VENUE_LABELS = { name: 'Name', ...LOCATION_LABELS } as const;

function locationFields(form: HtmlForm): Record<string, string | null> {
  return {
    displayName: form.text('displayName'),
    address: form.text('address'),
    city: form.text('city'),
    country: form.text('country'),
    timeZone: form.text('timeZone'),
  };
}

/** Organisers and venues: find, create, and each account's own page (keys, locations, webhooks). */
@ApiExcludeController()
@UseFilters(DashboardHtmlFilter)
@DashboardRoute('session')
@Controller('internal/dashboard')
export class DashboardAccountsController {
  constructor(
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
    private readonly accounts: DashboardAccountViews,
    private readonly sessions: DashboardSessionsService,
    private readonly pages: DashboardPages,
  ) {}

  @Get('accounts')
  @AcceptsQuery('q', 'organisers_cursor', 'venues_cursor')
  list(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query() query: Record<string, string | undefined>,
  ): Promise<FastifyReply> {
    return this.renderList(request, reply, query, {}, 200);
  }

  private async renderList(
    request: FastifyRequest,
    reply: FastifyReply,
    query: Record<string, string | undefined>,
    extra: Record<string, unknown>,
    status: number,
  ): Promise<FastifyReply> {
    const q = (typeof query['q'] === 'string' ? query['q'].trim() : '').slice(0, 200);
    // The text to find reaches SQL as text, which cannot hold a NUL: refused here rather than failing there.
    const unstorable = unstorableTextProblem(q);
    if (unstorable !== null) throw DomainError.invalidArgument(`The text to find ${unstorable}.`);
    const organiserCursor = typeof query['organisers_cursor'] === 'string' ? query['organisers_cursor'] : null;
    const venueCursor = typeof query['venues_cursor'] === 'string' ? query['venues_cursor'] : null;
    const limit = LIST_LIMIT;
    const [organisers, venues] = await Promise.all([
      this.organisers.page({ limit, cursor: organiserCursor, updatedAfter: null }, q),
      this.venues.page({ limit, cursor: venueCursor, updatedAfter: null }, q),
    ]);
    // The two lists page on their own: a link of one pager moves its own cursor and keeps the other's, and the search.
    const cursors = { organisers: organiserCursor, venues: venueCursor };
    const at = (own: keyof typeof cursors, cursor: string | null): string => {
      const moved = { ...cursors, [own]: cursor };
      return withQuery(ACCOUNTS, { q, organisers_cursor: moved.organisers, venues_cursor: moved.venues });
    };
    const pager = (label: string, own: keyof typeof cursors, next: string | null) => ({
      label,
      firstHref: cursors[own] === null ? null : at(own, null),
      nextHref: next === null ? null : at(own, next),
    });
    return this.pages.send(
      request,
      reply,
      'accounts',
      {
        title: 'Accounts',
        q,
        organisers,
        venues,
        organiserPager: pager('Organisers', 'organisers', organisers.nextCursor),
        venuePager: pager('Venues', 'venues', venues.nextCursor),
        organiserForm: {},
        organiserErrors: {},
        venueForm: {},
        venueErrors: {},
        ...extra,
      },
      status,
    );
  }

  @Post('organisers')
  async createOrganiser(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const form = new HtmlForm(request);
    const name = form.text('name');
    const placeholder = form.checked('placeholder');
    if (name === null || name.length > 500) {
      const message = name === null ? 'Give the organiser a name.' : 'The name is longer than 500 characters.';
      return this.renderList(
        request,
        reply,
        {},
        { organiserForm: { name, placeholder }, organiserErrors: { name: message } },
        400,
      );
    }
    const created = await this.organisers.create({ name, placeholder });
    this.sessions.flash(request, { kind: 'success', text: `Organiser ${created.name} created.` });
    throw new DashboardRedirect(dashboardPath('organisers', created.id));
  }

  @Post('venues')
  async createVenue(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const form = new HtmlForm(request);
    const location = filled(locationFields(form));
    const input = filled({ name: form.text('name') });
    const { value, errors } = await validateAs(
      CreateVenueDto,
      {
        ...input,
        locations: Object.keys(location).length === 0 ? [] : [location],
      },
      VENUE_LABELS,
    );
    if (Object.keys(errors).length > 0) {
      const { locations: locationError, ...own } = errors;
      const venueErrors = { ...own, ...(locationError === undefined ? {} : { timeZone: locationError }) };
      return this.renderList(request, reply, {}, { venueForm: { ...input, ...location }, venueErrors }, 400);
    }
    const created = await this.venues.create(value);
    this.sessions.flash(request, { kind: 'success', text: `Venue ${created.name} created.` });
    throw new DashboardRedirect(dashboardPath('venues', created.id));
  }

  @Get('organisers/:organiserId')
  async organiser(
    @Param('organiserId') organiserId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const view = await this.accounts.organiserPage(organiserId);
    return this.pages.send(request, reply, 'organiser', {
      ...view,
      portalLinks: this.newPortalLinks(request, dashboardPath('organisers', organiserId)),
    });
  }

  @Get('venues/:venueId')
  async venue(
    @Param('venueId') venueId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const view = await this.accounts.venuePage(venueId);
    return this.pages.send(request, reply, 'venue', {
      ...view,
      portalLinks: this.newPortalLinks(request, dashboardPath('venues', venueId)),
    });
  }

  /** The portal links just made for this account page, on its first GET only (a HEAD shows nothing, so takes nothing). */
  private newPortalLinks(request: FastifyRequest, accountPath: string): MadePortalLink[] {
    return request.method === 'GET' ? this.sessions.takeEachFlash(request, accountPath).map(madePortalLinkOf) : [];
  }

  @Post('venues/:venueId/locations')
  async addLocation(
    @Param('venueId') venueId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<FastifyReply> {
    const fields = filled(locationFields(new HtmlForm(request)));
    const { value, errors } = await validateAs(CreateLocationDto, fields, LOCATION_LABELS);
    if (Object.keys(errors).length > 0) {
      const view = await this.accounts.venuePage(venueId);
      return this.pages.send(request, reply, 'venue', { ...view, locationForm: fields, locationErrors: errors }, 400);
    }
    const created = await this.venues.addLocation(venueId, value);
    this.sessions.flash(request, { kind: 'success', text: `Location ${created.displayName ?? created.id} added.` });
    throw new DashboardRedirect(dashboardPath('venues', venueId));
  }

  /** Posted with its "I mean it" box ticked, as the event and order deletes are; without it, nothing is deleted. */
  @Post('venues/:venueId/locations/:locationId/delete')
  async deleteLocation(
    @Param('venueId') venueId: string,
    @Param('locationId') locationId: string,
    @Req() request: FastifyRequest,
  ): Promise<never> {
    const venue = await this.venues.describe(venueId);
    const displayName = venue.locations.find((location) => location.id === locationId)?.displayName ?? null;
    // Named as the page lists it, so the message says which one of the venue's rooms it was.
    const named = displayName === null ? locationId : `${displayName} (${locationId})`;
    if (!new HtmlForm(request).checked('confirm')) {
      this.sessions.flash(request, {
        kind: 'error',
        text: `Not deleted: tick “I mean it” to delete location ${named}; nothing was deleted.`,
      });
    } else {
      await this.venues.deleteLocation(venueId, locationId);
      this.sessions.flash(request, {
        kind: 'success',
        text: `Location ${named} deleted: it is left out of the venue from now on.`,
      });
    }
    throw new DashboardRedirect(dashboardPath('venues', venueId));
  }

  /** Reached only through a form of this dashboard; a stray GET says where to go instead of 405. */
  @Get('organisers')
  organisersIndex(): never {
    throw new DashboardRedirect(ACCOUNTS);
  }

  @Get('venues')
  venuesIndex(): never {
    throw new DashboardRedirect(ACCOUNTS);
  }
}
