import assert from 'node:assert/strict';
import type { Scope } from '../../src/common/auth-context/access';
import { internalApi } from './http-client';
import type { TestService } from './test-service';

export interface Organiser {
  id: string;
  key: string;
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
  };
}
