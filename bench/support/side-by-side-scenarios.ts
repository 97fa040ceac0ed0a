import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import { CursorCodec } from '../../libs/cursor/cursor-codec';
import { isoTimestampSql } from '../../src/database/iso-timestamp-sql';
import { seededId } from './bench-seed';
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
          // Before every seeded event, so created events never land on a measured list page.
          body: JSON.stringify({ title: { en: 'Created by the bench' }, startTime: '2026-06-01T19:00:00Z' }),
        };
      },
      comparable: without(['id', 'url', 'updatedAt']),
    },
  ];
}

/** The cursor the servers hand out after `rowsBefore` rows of the organiser's default events ordering. */
async function cursorAfter(db: Client, codec: CursorCodec, organiserId: string, rowsBefore: number): Promise<string> {
  const { rows } = await db.query<{ id: string; position: string }>(
    `SELECT e.id, ${isoTimestampSql('e.start_time')} AS position FROM event e
      WHERE e.organizer_id = $1 AND e.start_time IS NOT NULL
      ORDER BY e.start_time DESC, e.id DESC OFFSET $2 LIMIT 1`,
    [organiserId, rowsBefore - 1],
  );
  const anchor = rows[0];
  if (anchor === undefined) throw new Error(`fewer than ${rowsBefore} events`);
  // Signed for the organiser's events list, as the service signs it (its list's parameters as JSON).
  return codec.encode(
    { ordering: 'events:start_time_desc', value: anchor.position, id: anchor.id },
    JSON.stringify({ principalId: organiserId }),
  );
}

/**
 * The inputs of the scenarios over events seeded by `seedEvents`: cursors
 * signed with the database's key, and the ids reads and writes use.
 */
export async function scenarioData(
  db: Client,
  seeded: { organiserId: string; events: number; limit: number },
): Promise<ScenarioData> {
  const { rows } = await db.query<{ value: string }>(
    `SELECT value FROM service_setting WHERE name = 'cursor_signing_key'`,
  );
  const codec = new CursorCodec(Buffer.from(rows[0]?.value ?? '', 'hex'));
  const { organiserId, events, limit } = seeded;
  const deepPage = Math.min(1_000, Math.ceil(events / limit) - 1);
  // Writes touch the oldest events and reads by id a band at 20%: neither is on a measured list page.
  const band = Math.min(1_000, Math.floor(events * 0.04));
  const ids = (from: number): string[] => Array.from({ length: band }, (_, i) => seededId('evt', from + i));
  return {
    limit,
    pageTwoCursor: await cursorAfter(db, codec, organiserId, limit),
    deepPageCursor: await cursorAfter(db, codec, organiserId, limit * (deepPage - 1)),
    deepPage,
    updatedAfter: new Date(Date.UTC(2026, 0, 1) + Math.floor(events / 2) * 1000).toISOString(),
    readIds: ids(Math.floor(events * 0.2) + 1),
    writeIds: ids(1),
    runTag: `bench-${randomBytes(6).toString('hex')}`,
  };
}
