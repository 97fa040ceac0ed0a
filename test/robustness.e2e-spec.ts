import fc from 'fast-check';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { EVENT_PATCH_FIELDS } from '../libs/event-rules';
import { fixtures, type Organiser, type Venue } from './support/fixtures';
import { internalApi, publicApi, type HttpResult } from './support/http-client';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

/** Any answer but a 5xx, and every error in the contract's error body. */
function assertHandled(result: HttpResult, what: string): void {
  assert.ok(result.status < 500, `${what} answered ${result.status}: ${result.text}`);
  if (result.status >= 400) {
    assert.deepEqual(Object.keys(result.body as object).sort(), ['error', 'message', 'request_id'], what);
  }
}

/** Bodies whose keys are mostly the endpoint's own fields, with values of any JSON type. */
function bodies(fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.string() });
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(
      '2027-01-01T10:00:00Z',
      1_800_000_000_000,
      'https://example.com/hook',
      'draft',
      'unlisted',
      null,
      -1,
      1e308,
    ),
  );
  return fc.dictionary(key, value, { maxKeys: 8 });
}

describe('robustness: no request body makes the API fail', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let organiser: Organiser;
  let venue: Venue;
  let eventId: string;

  const app = withApp({ RATE_LIMIT_WRITES: '100000', RATE_LIMIT_READS: '100000' });
  before(async () => {
    ({ service, api, admin } = app);
    organiser = await fixtures(service).organiser({
      scopes: ['events:read', 'events:write', 'orders:read', 'webhooks:read', 'webhooks:write'],
    });
    venue = await fixtures(service).venue();
    const created = await api('POST', '/v1/events', {
      key: organiser.key,
      body: { startTime: '2027-01-01T10:00:00Z' },
      headers: { 'idempotency-key': randomUUID() },
    });
    eventId = created.body.data.id as string;
  });

  const runs = { numRuns: 60 };

  it('POST and PATCH /v1/events answer every body without a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(bodies(EVENT_PATCH_FIELDS), async (body) => {
        assertHandled(
          await api('POST', '/v1/events', { key: organiser.key, body, headers: { 'idempotency-key': randomUUID() } }),
          'POST /v1/events',
        );
        assertHandled(await api('PATCH', `/v1/events/${eventId}`, { key: organiser.key, body }), 'PATCH /v1/events');
      }),
      runs,
    );
  });

  it('POST /v1/webhooks answers every body without a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(bodies(['url', 'events', 'description', 'enabled']), async (body) => {
        const result = await api('POST', '/v1/webhooks', { key: organiser.key, body });
        assertHandled(result, 'POST /v1/webhooks');
        if (result.status === 201) await api('DELETE', `/v1/webhooks/${result.body.data.id}`, { key: organiser.key });
      }),
      runs,
    );
  });

  it('the internal write operations answer every body without a 5xx', async () => {
    const targets: Array<[string, string[]]> = [
      ['/internal/organisers', ['name', 'placeholder']],
      ['/internal/venues', ['name', 'slug', 'description', 'websiteUrl', 'category', 'claimStatus', 'locations']],
      [`/internal/venues/${venue.id}/locations`, ['displayName', 'address', 'city', 'country', 'timeZone']],
      ['/internal/keys', ['principal', 'scopes', 'actorRole', 'name']],
      ['/internal/events', ['organizerId', ...EVENT_PATCH_FIELDS]],
      [
        '/internal/orders',
        ['eventId', 'status', 'isRsvp', 'lineItems', 'totalAmountMinor', 'currency', 'billingName', 'billingEmail'],
      ],
    ];
    for (const [path, fields] of targets) {
      await fc.assert(
        fc.asyncProperty(bodies(fields), async (body) => assertHandled(await admin('POST', path, { body }), path)),
        runs,
      );
    }
  });
});
