import type { LoadRequest } from './measured-run';

/**
 * The scenarios of the side-by-side benchmark. Each builds its nth request
 * (so ids, titles and idempotency keys vary) and says which part of an
 * answer must be the same from the service and from the peer.
 */
export type ScenarioKind = 'read' | 'write' | 'reference';

export interface Scenario {
  name: string;
  /** `reference` scenarios are measured for a comparison (page 2 against page 1,000), not against the peer. */
  kind: ScenarioKind;
  request(n: number): LoadRequest;
  /** The part of a response both servers must agree on (values that differ by design removed). */
  comparable(status: number, body: { data?: Record<string, unknown> }): unknown;
}

export interface ScenarioData {
  limit: number;
  /** Cursors of the second page and of the deep page of the default events ordering. */
  pageTwoCursor: string;
  deepPageCursor: string;
  deepPage: number;
  updatedAfter: string;
  /** Events read by id, and the disjoint set that PATCH writes (none of them on a measured list page). */
  readIds: string[];
  writeIds: string[];
  /** Makes this run's idempotency keys unique. */
  runTag: string;
}

const whole = (status: number, body: unknown): unknown => ({ status, body });

/** Drops the fields a write sets afresh (ids, times), keeping everything else to compare. */
function without(fields: string[]): Scenario['comparable'] {
  return (status, body) => {
    const data = { ...(body.data ?? {}) };
    for (const field of fields) delete data[field];
    return { status, data };
  };
}

export function sideBySideScenarios(data: ScenarioData): Scenario[] {
  const list = (cursor: string | null, extra = ''): string =>
    `/v1/events?limit=${data.limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}${extra}`;
  let keys = 0;
  return [
    {
      name: 'events first page',
      kind: 'read',
      request: () => ({ method: 'GET', path: list(null) }),
      comparable: whole,
    },
    {
      name: 'events page 2',
      kind: 'reference',
      request: () => ({ method: 'GET', path: list(data.pageTwoCursor) }),
      comparable: whole,
    },
    {
      name: `events page 1,000 (page ${data.deepPage.toLocaleString('en')})`,
      kind: 'read',
      request: () => ({ method: 'GET', path: list(data.deepPageCursor) }),
      comparable: whole,
    },
    {
      name: 'events updated_after',
      kind: 'read',
      request: () => ({ method: 'GET', path: list(null, `&updated_after=${encodeURIComponent(data.updatedAfter)}`) }),
      comparable: whole,
    },
    {
      name: 'orders first page',
      kind: 'read',
      request: () => ({ method: 'GET', path: `/v1/orders?limit=${data.limit}` }),
      comparable: whole,
    },
    {
      name: 'GET /v1/events/{id}',
      kind: 'read',
      request: (n) => ({ method: 'GET', path: `/v1/events/${data.readIds[n % data.readIds.length]}` }),
      comparable: whole,
    },
    {
      name: 'PATCH /v1/events/{id}',
      kind: 'write',
      request: (n) => ({
        method: 'PATCH',
        path: `/v1/events/${data.writeIds[n % data.writeIds.length]}`,
        body: JSON.stringify({ title: { en: `Renamed ${n % 7}` } }),
      }),
      comparable: without(['updatedAt']),
    },
    {
      name: 'POST /v1/events',
      kind: 'write',
      request: () => {
        keys += 1;
        return {
          method: 'POST',
          path: '/v1/events',
          headers: { 'idempotency-key': `${data.runTag}-${keys}` },
          body: JSON.stringify({ title: { en: 'Created by the bench' }, startTime: '2027-05-01T19:00:00Z' }),
        };
      },
      comparable: without(['id', 'url', 'updatedAt']),
    },
  ];
}
