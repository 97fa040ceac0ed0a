import assert from 'node:assert/strict';
import type { Scope } from '../../src/common/auth-context/access';
import { internalApi, publicApi } from './http-client';
import type { TestService } from './test-service';

export interface Organiser {
  id: string;
  key: string;
}

export interface EventRow {
  id: string;
  organizerId: string | null;
  visibility: string;
}

export interface OrderRow {
  id: string;
  eventId: string;
  status: string;
}

export interface Venue {
  id: string;
  key: string;
  locationIds: string[];
}

/** Fixtures go through the internal API, as the dashboard would. */
export function fixtures(service: TestService) {
  const admin = internalApi(service);
  return {
    async organiser(options: { scopes?: Scope[]; placeholder?: boolean; name?: string } = {}): Promise<Organiser> {
      const created = await admin('POST', '/internal/organisers', {
        body: { name: options.name ?? 'Test Organiser', placeholder: options.placeholder ?? false },
      });
      assert.equal(created.status, 201, created.text);
      const key = await this.key({ type: 'organiser', id: created.body.data.id }, options.scopes);
      return { id: created.body.data.id as string, key };
    },

    async key(principal: { type: string; id: string }, scopes?: Scope[]): Promise<string> {
      const minted = await admin('POST', '/internal/keys', { body: { principal, scopes, actorRole: 'owner' } });
      assert.equal(minted.status, 201, minted.text);
      return minted.body.data.key as string;
    },

    async venue(options: { scopes?: Scope[]; locations?: number; timeZone?: string } = {}): Promise<Venue> {
      const locations = Array.from({ length: options.locations ?? 1 }, (_, index) => ({
        displayName: `Room ${index + 1}`,
        city: 'Berlin',
        country: 'DE',
        timeZone: options.timeZone ?? 'Europe/Berlin',
      }));
      const created = await admin('POST', '/internal/venues', { body: { name: 'Test Venue', locations } });
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      const key = await this.key({ type: 'venue', id }, options.scopes);
      return { id, key, locationIds: (created.body.data.locations as Array<{ id: string }>).map((l) => l.id) };
    },

    /** An event made by the Events context itself (internal API): any visibility, a start time unless told. */
    async event(organizerId: string | null, fields: Record<string, unknown> = {}): Promise<EventRow> {
      const created = await admin('POST', '/internal/events', {
        body: { organizerId, title: { EN: 'Fixture event' }, startTime: '2030-01-01T18:00:00Z', ...fields },
      });
      assert.equal(created.status, 201, created.text);
      const data = created.body.data as { id: string; organizerId: string | null; visibility: string };
      return { id: data.id, organizerId: data.organizerId, visibility: data.visibility };
    },

    /** An order of an event (internal API); `status` defaults to confirmed, which emits order.confirmed. */
    async order(eventId: string, fields: Record<string, unknown> = {}): Promise<OrderRow> {
      const created = await admin('POST', '/internal/orders', {
        body: {
          eventId,
          status: 'confirmed',
          lineItems: [{ quantity: 1, unitAmountMinor: 1500 }],
          totalAmountMinor: 1500,
          ...fields,
        },
      });
      assert.equal(created.status, 201, created.text);
      const data = created.body.data as { id: string; status: string };
      return { id: data.id, eventId, status: data.status };
    },

    /** A subscription made as its owner would: through the public API with the owner's key. */
    async webhook(
      key: string,
      url: string,
      events: string[] = ['order.confirmed', 'event.published'],
    ): Promise<{ id: string; secret: string }> {
      const created = await publicApi(service)('POST', '/v1/webhooks', { key, body: { url, events } });
      assert.equal(created.status, 201, created.text);
      return { id: created.body.data.id as string, secret: created.body.data.secret as string };
    },
  };
}
