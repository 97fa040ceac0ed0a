import { Injectable } from '@nestjs/common';
import { SCOPES, type Principal } from '../common/auth-context/access';
import { DomainError } from '../common/errors/domain-error';
import { DEFAULT_SCOPES } from '../identity/api-keys.service';
import { ApiKeysService } from '../identity/api-keys.service';
import { KEY_MANAGER_ROLES, type KeySummary } from '../identity/dto/identity.dto';
import { OrganisersService } from '../identity/organisers.service';
import { VenuesService } from '../venues/venues.service';
import { healthOf } from '../webhooks/dto/webhook-health';
import { WebhooksService } from '../webhooks/webhooks.service';
import { dashboardPath } from './dashboard-paths';

export type AccountType = 'organiser' | 'venue';

export interface Account {
  principal: Principal & { type: AccountType };
  name: string;
  href: string;
}

/** What an account page shows, gathered from the domain services (the pages never query the database). */
@Injectable()
export class DashboardAccountViews {
  constructor(
    private readonly organisers: OrganisersService,
    private readonly venues: VenuesService,
    private readonly keys: ApiKeysService,
    private readonly webhooks: WebhooksService,
  ) {}

  async account(type: AccountType, id: string): Promise<Account> {
    if (type === 'organiser') {
      const organiser = await this.organisers.find(id);
      if (organiser === null) throw DomainError.notFound('Organiser');
      return { principal: { type, id }, name: organiser.name, href: dashboardPath('organisers', id) };
    }
    const venue = await this.venues.describe(id);
    return { principal: { type, id }, name: venue.name ?? id, href: dashboardPath('venues', id) };
  }

  async organiserPage(organiserId: string): Promise<Record<string, unknown>> {
    const organiser = await this.organisers.find(organiserId);
    if (organiser === null) throw DomainError.notFound('Organiser');
    const principal: Principal = { type: 'organiser', id: organiserId };
    return {
      title: `Organiser ${organiser.name}`,
      organiser,
      ...(await this.accountSections(principal, dashboardPath('organisers', organiserId))),
    };
  }

  async venuePage(venueId: string): Promise<Record<string, unknown>> {
    const [venue, timeZones] = await Promise.all([this.venues.describe(venueId), this.venues.timeZonesOf(venueId)]);
    const principal: Principal = { type: 'venue', id: venueId };
    return {
      title: `Venue ${venue.name ?? venue.id}`,
      venue,
      timeZones,
      locationForm: {},
      locationErrors: {},
      ...(await this.accountSections(principal, dashboardPath('venues', venueId))),
    };
  }

  async keyOf(account: Account, keyId: string): Promise<KeySummary> {
    const key = (await this.keys.list(account.principal)).find((candidate) => candidate.id === keyId);
    if (key === undefined) throw DomainError.notFound('Key');
    return key;
  }

  /** Keys (an account has a handful: listed whole) and webhooks (ten at most) of one account. */
  private async accountSections(principal: Principal, accountHref: string): Promise<Record<string, unknown>> {
    const [keys, webhooks] = await Promise.all([this.keys.list(principal), this.webhooks.list(principal)]);
    return {
      accountHref,
      breadcrumbs: [{ label: 'Accounts', href: dashboardPath('accounts') }],
      keys: keys.reverse(),
      webhooks: webhooks.map((webhook) => ({ ...webhook, health: healthOf(webhook) })),
      scopes: SCOPES,
      defaultScopes: DEFAULT_SCOPES[principal.type === 'venue' ? 'venue' : 'organiser'],
      roles: KEY_MANAGER_ROLES,
      keyForm: { actorRole: 'owner' },
      keyErrors: {},
    };
  }
}
