import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { hasWritableFields, parseEventPatch, type EventPatch, type EventPatchMode } from '../../libs/event-rules';
import { newResourceId } from '../../libs/ids/resource-id';
import { entityTagOf, ifMatchMatches } from '../../src/common/http/entity-tag';
import { EVENT_COLUMNS, PeerError, type PeerEvent, type PeerQueries } from './peer-queries';

/**
 * The peer's two event writes, with the service's rules and statements:
 * PATCH locks the row before the `If-Match` check; POST claims its
 * Idempotency-Key in the creating transaction and stores the response there.
 * Only the fields of the public Event shape are written here; a body with
 * any other field, or an event with a location or `dateOnly`, is answered
 * `501` (the peer measures the common path, it does not reimplement every rule).
 */
const SUPPORTED = new Set(['title', 'description', 'visibility', 'startTime', 'endTime']);
const COLUMN: Record<string, string> = { startTime: 'start_time', endTime: 'end_time' };

export interface WriteResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function parse(body: unknown, mode: EventPatchMode): EventPatch {
  const result = parseEventPatch(body, mode);
  if (!result.ok) throw new PeerError(result.code === 'forbidden' ? 403 : 400, result.code, `${result.message}.`);
  const unsupported = Object.keys(result.patch).find((field) => !SUPPORTED.has(field));
  if (unsupported !== undefined) throw new PeerError(501, 'not_implemented', `The peer does not write ${unsupported}.`);
  return result.patch;
}

function stored(patch: EventPatch, field: keyof EventPatch): unknown {
  const value = patch[field];
  if (value instanceof Date) return value.toISOString();
  return field === 'title' || field === 'description' ? JSON.stringify(value) : value;
}

/** The service's Idempotency-Key rules: required, one header of 1 to 255 printable ASCII characters. */
export function idempotencyKeyOf(raw: string | string[] | undefined): string {
  if (raw === undefined || (typeof raw === 'string' && raw.trim() === '')) {
    throw new PeerError(400, 'idempotency_key_required', 'POST /v1/events requires an Idempotency-Key header.');
  }
  if (typeof raw !== 'string' || raw.length > 255 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new PeerError(
      400,
      'invalid_argument',
      'Idempotency-Key must be one header of 1 to 255 printable ASCII characters.',
    );
  }
  return raw;
}

export class PeerWrites {
  constructor(private readonly queries: PeerQueries) {}

  async update(organiserId: string, eventId: string, body: unknown, ifMatch: string | undefined): Promise<WriteResult> {
    const patch = parse(body, 'update');
    if (!hasWritableFields(patch)) throw new PeerError(400, 'invalid_argument', 'The body has no writable fields.');
    return this.queries.transaction(async (client) => {
      const { rows } = await client.query({
        name: 'peer-event-lock',
        text: `SELECT ${EVENT_COLUMNS}, e.location_id, e.date_only FROM event e WHERE e.id = $1 AND e.organizer_id = $2 FOR UPDATE`,
        values: [eventId, organiserId],
      });
      const row = rows[0];
      if (row === undefined) throw new PeerError(404, 'not_found', 'Event not found.');
      if (row.location_id !== null || row.date_only === true) {
        throw new PeerError(501, 'not_implemented', 'The peer does not write events with a location or dateOnly.');
      }
      if (ifMatch !== undefined && !ifMatchMatches(ifMatch, entityTagOf({ data: this.queries.event(row) }))) {
        throw new PeerError(412, 'precondition_failed', 'If-Match does not match the current ETag.');
      }
      const current = row.visibility ?? 'draft';
      // Only a draft's visibility moves through the API (parsing already refused public and cancelled).
      if (patch.visibility !== undefined && patch.visibility !== current && current !== 'draft') {
        throw new PeerError(403, 'forbidden', `The visibility of a ${current} event cannot be changed this way.`);
      }
      const startTime = patch.startTime?.toISOString() ?? row.start_time;
      const endTime = patch.endTime?.toISOString() ?? row.end_time;
      if (startTime !== null && endTime !== null && endTime < startTime) {
        throw new PeerError(400, 'invalid_argument', 'endTime must not be before startTime.');
      }
      const updatedAt = new Date(Math.max(Date.now(), Date.parse(row.updated_at) + 1)).toISOString();
      const fields = (Object.keys(patch) as Array<keyof EventPatch>).filter((field) => SUPPORTED.has(field));
      await client.query({
        name: `peer-event-update-${fields.join('-')}`,
        text: `UPDATE event SET ${fields.map((field, i) => `${COLUMN[field] ?? field} = $${i + 3}`).join(', ')}, updated_at = $2 WHERE id = $1`,
        values: [eventId, updatedAt, ...fields.map((field) => stored(patch, field))],
      });
      const event = this.queries.event({
        ...row,
        title: patch.title ?? row.title,
        visibility: patch.visibility ?? row.visibility,
        start_time: startTime,
        end_time: endTime,
        updated_at: updatedAt,
      });
      return { status: 200, headers: { etag: entityTagOf({ data: event }) }, body: event };
    });
  }

  async create(organiserId: string, key: string, body: unknown): Promise<WriteResult & { replayed: boolean }> {
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(body) ?? '')
      .digest('hex');
    return this.queries.transaction(async (client) => {
      await client.query(`SET LOCAL lock_timeout = '5s'`);
      await client.query({
        name: 'peer-idempotency-expire',
        text: `DELETE FROM idempotency_key WHERE organizer_id = $1 AND key = $2 AND created_at < now() - interval '7 days'`,
        values: [organiserId, key],
      });
      const claimed = await client.query({
        name: 'peer-idempotency-claim',
        text: `INSERT INTO idempotency_key (organizer_id, key, state, request_fingerprint) VALUES ($1, $2, 'pending', $3) ON CONFLICT DO NOTHING RETURNING key`,
        values: [organiserId, key, fingerprint],
      });
      if (claimed.rows.length === 0) return { ...(await this.replay(client, organiserId, key)), replayed: true };
      const patch = parse(body, 'create');
      const event = await this.insert(client, organiserId, patch);
      const response = {
        status: 201,
        headers: { etag: entityTagOf({ data: event }), location: `/v1/events/${event.id}` },
        body: event,
      };
      await client.query({
        name: 'peer-idempotency-store',
        text: `UPDATE idempotency_key SET state = 'succeeded', response_status = $3, response_headers = $4, response_body = $5 WHERE organizer_id = $1 AND key = $2`,
        values: [organiserId, key, 201, JSON.stringify(response.headers), JSON.stringify(event)],
      });
      return { ...response, replayed: false };
    });
  }

  private async insert(client: PoolClient, organiserId: string, patch: EventPatch): Promise<PeerEvent> {
    const id = newResourceId('evt');
    const now = new Date().toISOString();
    await client.query({
      name: 'peer-event-insert',
      text: `INSERT INTO event (id, organizer_id, visibility, title, description, start_time, end_time, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      values: [
        id,
        organiserId,
        patch.visibility ?? null,
        stored(patch, 'title') ?? null,
        stored(patch, 'description') ?? null,
        stored(patch, 'startTime') ?? null,
        stored(patch, 'endTime') ?? null,
        now,
      ],
    });
    return this.queries.event({
      id,
      title: patch.title ?? null,
      visibility: patch.visibility ?? null,
      start_time: stored(patch, 'startTime') ?? null,
      end_time: stored(patch, 'endTime') ?? null,
      updated_at: now,
    });
  }

  private async replay(client: PoolClient, organiserId: string, key: string): Promise<WriteResult> {
    const { rows } = await client.query({
      name: 'peer-idempotency-replay',
      text: `SELECT state, response_status, response_headers, response_body FROM idempotency_key WHERE organizer_id = $1 AND key = $2`,
      values: [organiserId, key],
    });
    const row = rows[0];
    if (row === undefined || row.state !== 'succeeded') {
      throw new PeerError(409, 'conflict', 'A request with this Idempotency-Key is still in progress.');
    }
    return { status: row.response_status, headers: row.response_headers ?? {}, body: JSON.parse(row.response_body) };
  }
}
