import type { INestApplicationContext } from '@nestjs/common';
import { SCOPES, type Scope } from '../common/auth-context/access';
import { ApiKeysService } from '../identity/api-keys.service';
import { OrganisersService } from '../identity/organisers.service';
import { VenuesService } from '../venues/venues.service';

export interface DemoKeys {
  organiserId: string;
  organiserKey: string;
  venueId: string;
  venueKey: string;
}

const ORGANISER_SCOPES: Scope[] = [...SCOPES];
const VENUE_SCOPES: Scope[] = ['events:read', 'webhooks:read', 'webhooks:write'];

/**
 * On the first start of an empty embedded database: a demo organiser with an
 * owner key holding every organiser scope, and a demo venue with one
 * location and a venue key. Returns the keys so they can be printed once;
 * returns null when the database already has organisers.
 */
export async function seedDemoIfEmpty(app: INestApplicationContext): Promise<DemoKeys | null> {
  const organisers = app.get(OrganisersService);
  if ((await organisers.list()).length > 0) return null;
  const venues = app.get(VenuesService);
  const keys = app.get(ApiKeysService);
  const organiser = await organisers.create({ name: 'Demo Organiser' });
  const venue = await venues.create({
    name: 'Demo Hall',
    slug: 'demo-hall',
    description: { EN: 'A demo venue for trying the API.' },
    locations: [
      { displayName: 'Main room', address: '1 Demo Street', city: 'Berlin', country: 'DE', timeZone: 'Europe/Berlin' },
    ],
  });
  const organiserKey = await keys.mint({
    principal: { type: 'organiser', id: organiser.id },
    scopes: ORGANISER_SCOPES,
    actorRole: 'owner',
    name: 'demo owner key',
  });
  const venueKey = await keys.mint({
    principal: { type: 'venue', id: venue.id },
    scopes: VENUE_SCOPES,
    actorRole: 'owner',
    name: 'demo venue key',
  });
  return { organiserId: organiser.id, organiserKey: organiserKey.key, venueId: venue.id, venueKey: venueKey.key };
}
