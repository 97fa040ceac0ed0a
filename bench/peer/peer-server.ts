import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'pg';
import { CursorCodec } from '../../libs/cursor/cursor-codec';
import { hashApiKey, isWellFormedApiKey } from '../../libs/keys/api-key-format';
import { parseInstant } from '../../libs/time/instant';
import { bearerTokenOf } from '../../src/common/auth-context/bearer-token';
import { entityTagOf, ifNoneMatchMatches } from '../../src/common/http/entity-tag';
import { parseLimit } from '../../src/common/pagination/page-request';
import { requestIdFor } from '../../src/common/request-id/request-id';
import { ISO_TIMESTAMP_TYPES } from '../../src/database/sql/timestamptz-text';
import { PeerError, PeerQueries, type ListName } from './peer-queries';
import { idempotencyKeyOf, PeerWrites } from './peer-writes';

/**
 * The frameworkless peer of the side-by-side benchmark: node:http + pg and
 * nothing else, serving the benchmarked routes of the public contract over
 * the same tables with the same rules (key by SHA-256 on every request,
 * per-account fixed-window budgets and their headers, scopes, keyset paging
 * with the service's cursors, the envelope, X-Request-Id, one JSON log line
 * per request). It stands for "how fast this machine serves this contract".
 * Organiser keys only; run as `node dist/bench/peer/peer-server.js`.
 */
const started = performance.now();
const env = process.env;
// Sessions in UTC, and timestamptz text turned into ISO strings without a Date, as the service does (timestamptz-text.ts).
const pool = new Pool({
  connectionString: env['DATABASE_URL'],
  max: 20,
  application_name: 'events-api-peer',
  options: '-c TimeZone=UTC',
  types: ISO_TIMESTAMP_TYPES,
});
const budgets = { reads: Number(env['RATE_LIMIT_READS'] ?? 600), writes: Number(env['RATE_LIMIT_WRITES'] ?? 120) };
const logRequests = (env['LOG_LEVEL'] ?? 'info') !== 'silent';
const counters = new Map<string, { windowStart: number; hits: number }>();
const PAGING = new Set(['limit', 'cursor', 'updated_after']);
const BODY_LIMIT = 1_048_576;

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

function takeBudget(account: string, write: boolean, headers: Record<string, string>): void {
  const limit = write ? budgets.writes : budgets.reads;
  const now = Date.now();
  const windowStart = Math.floor(now / 60_000) * 60_000;
  const name = `${write ? 'writes' : 'reads'}:${account}`;
  let counter = counters.get(name);
  if (counter === undefined || counter.windowStart !== windowStart)
    counters.set(name, (counter = { windowStart, hits: 0 }));
  counter.hits += 1;
  const secondsLeft = Math.ceil((windowStart + 60_000 - now) / 1000);
  headers['x-ratelimit-limit'] = String(limit);
  headers['x-ratelimit-remaining'] = String(Math.max(0, limit - counter.hits));
  headers['x-ratelimit-reset'] = String(Math.floor(now / 1000) + secondsLeft);
  if (counter.hits > limit) {
    headers['retry-after'] = String(secondsLeft);
    throw new PeerError(429, 'rate_limited', 'The account budget is used up.');
  }
}

function pageQuery(query: URLSearchParams): { limit: number; cursor: string | null; updatedAfter: Date | null } {
  for (const name of query.keys()) {
    if (!PAGING.has(name)) throw new PeerError(400, 'unsupported_parameter', `Unsupported query parameter "${name}".`);
  }
  const cursors = query.getAll('cursor');
  if (cursors.length > 1) throw new PeerError(400, 'invalid_cursor', 'cursor must be given once.');
  const rawUpdatedAfter = query.getAll('updated_after');
  const updatedAfter =
    rawUpdatedAfter.length === 0
      ? null
      : parseInstant(rawUpdatedAfter.length === 1 ? rawUpdatedAfter[0] : rawUpdatedAfter);
  if (rawUpdatedAfter.length > 0 && updatedAfter === null) {
    throw new PeerError(400, 'invalid_argument', 'updated_after must be an ISO 8601 timestamp or epoch milliseconds.');
  }
  const limits = query.getAll('limit');
  return { limit: parseLimit(limits.length === 1 ? limits[0] : undefined), cursor: cursors[0] ?? null, updatedAfter };
}

async function jsonBody(request: IncomingMessage): Promise<unknown> {
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(request.headers['content-type'] ?? '')) {
    throw new PeerError(415, 'invalid_argument', 'Request bodies must be JSON (Content-Type: application/json).');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new PeerError(413, 'invalid_argument', 'The request body is too large.');
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new PeerError(400, 'invalid_argument', 'The request body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PeerError(400, 'invalid_argument', 'The request body must be a JSON object.');
  }
  return body;
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new PeerError(400, 'invalid_argument', 'The path is not valid percent-encoding.');
  }
}

async function route(
  request: IncomingMessage,
  headers: Record<string, string>,
  parts: { path: string; query: URLSearchParams },
  app: { queries: PeerQueries; writes: PeerWrites },
): Promise<Reply> {
  const method = request.method ?? 'GET';
  const segments = parts.path.split('/');
  const isEvents = segments[1] === 'v1' && segments[2] === 'events';
  const list: ListName | null =
    segments.length === 3 && segments[1] === 'v1' && (segments[2] === 'events' || segments[2] === 'orders')
      ? segments[2]
      : null;
  const eventSegment = isEvents && segments.length === 4 ? segments[3] : undefined;
  const eventId = eventSegment === undefined || eventSegment === '' ? null : decodedSegment(eventSegment);
  if (list === null && eventId === null) throw new PeerError(404, 'not_found', 'No such route.');
  // As the service does, a route miss is answered before any key is looked up.
  const allowed =
    list === 'events' ? ['GET', 'HEAD', 'POST'] : list === 'orders' ? ['GET', 'HEAD'] : ['GET', 'HEAD', 'PATCH'];
  if (!allowed.includes(method)) {
    headers['allow'] = allowed.join(', ');
    throw new PeerError(405, 'method_not_allowed', 'Method not allowed.');
  }
  const token = bearerTokenOf(request.headers.authorization);
  const key = token === null || !isWellFormedApiKey(token) ? null : await app.queries.activeKey(hashApiKey(token));
  if (key === null)
    throw new PeerError(401, 'unauthorized', 'A valid API key is required: Authorization: Bearer <API_KEY>.');
  const write = method !== 'GET' && method !== 'HEAD';
  takeBudget(`${key.principal_type}:${key.principal_id}`, write, headers);
  const scope = `${list === 'orders' ? 'orders' : 'events'}:${write ? 'write' : 'read'}`;
  if (key.principal_type !== 'organiser' || !key.scopes.includes(scope)) {
    throw new PeerError(403, 'insufficient_scope', `This route needs the ${scope} scope.`);
  }
  const organiser = key.principal_id;
  if (list !== null && (method === 'GET' || method === 'HEAD'))
    return { status: 200, body: await app.queries.page(list, organiser, pageQuery(parts.query)) };
  if (list === 'events' && method === 'POST') {
    const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
    const created = await app.writes.create(organiser, idempotencyKey, await jsonBody(request));
    return {
      status: created.status,
      headers: created.replayed ? { ...created.headers, 'idempotent-replayed': 'true' } : created.headers,
      body: { data: created.body },
    };
  }
  if (eventId !== null && (method === 'GET' || method === 'HEAD')) {
    const event = await app.queries.eventOf(organiser, eventId);
    if (event === null) throw new PeerError(404, 'not_found', 'Event not found.');
    const body = { data: event };
    const etag = entityTagOf(body);
    const ifNoneMatch = request.headers['if-none-match'];
    return ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)
      ? { status: 304, headers: { etag } }
      : { status: 200, headers: { etag }, body };
  }
  if (eventId !== null && method === 'PATCH') {
    const updated = await app.writes.update(organiser, eventId, await jsonBody(request), request.headers['if-match']);
    return { status: updated.status, headers: updated.headers, body: { data: updated.body } };
  }
  throw new PeerError(405, 'method_not_allowed', 'Method not allowed.');
}

/**
 * BENCH_PEER_EXTRA_CPU_US: CPU the peer spends on every request before
 * serving it (a busy loop), and nothing else. It shows what a fixed cost per
 * request, such as a framework's, does to every ratio of the bench,
 * PostgreSQL's included (see docs/performance.md). Unset or 0: none; like
 * the bench's other settings, anything but a non-negative number is refused.
 */
function extraCpuPerRequest(setting: string | undefined): () => void {
  const micros = Number(setting ?? 0);
  if (!Number.isFinite(micros) || micros < 0) {
    throw new Error('BENCH_PEER_EXTRA_CPU_US must be a non-negative number of microseconds');
  }
  if (micros === 0) return () => undefined;
  const nanos = BigInt(Math.round(micros * 1000));
  return () => {
    const start = process.hrtime.bigint();
    while (process.hrtime.bigint() - start < nanos) {
      // Busy: the point is to spend CPU on this thread.
    }
  };
}

async function main(): Promise<void> {
  const setting = await pool.query(`SELECT value FROM service_setting WHERE name = 'cursor_signing_key'`);
  const queries = new PeerQueries(
    pool,
    new CursorCodec(Buffer.from(setting.rows[0].value, 'hex')),
    env['PUBLIC_WEB_URL'] ?? 'http://localhost:3000',
  );
  const app = { queries, writes: new PeerWrites(queries) };
  const extraCpu = extraCpuPerRequest(env['BENCH_PEER_EXTRA_CPU_US']);
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const at = performance.now();
    extraCpu();
    const requestId = requestIdFor(request);
    const headers: Record<string, string> = { 'x-request-id': requestId, 'x-content-type-options': 'nosniff' };
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const send = (reply: Reply): void => {
      const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
      if (reply.body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
      response
        .writeHead(reply.status, { ...headers, ...reply.headers, 'content-length': String(Buffer.byteLength(text)) })
        .end(text);
      if (logRequests) {
        process.stdout.write(
          `${JSON.stringify({ level: 30, time: new Date().toISOString(), service: 'events-api-peer', reqId: requestId, method: request.method, url: path, statusCode: reply.status, responseTimeMs: Math.round((performance.now() - at) * 10) / 10, msg: 'request completed' })}\n`,
        );
      }
    };
    route(request, headers, { path, query: new URLSearchParams(query < 0 ? '' : url.slice(query + 1)) }, app).then(
      send,
      (error: unknown) => {
        if (error instanceof PeerError)
          return send({
            status: error.status,
            body: { error: error.code, message: error.message, request_id: requestId },
          });
        if ((error as { code?: unknown }).code === '55P03')
          return send({
            status: 409,
            body: {
              error: 'conflict',
              message: 'A request with this Idempotency-Key is still in progress.',
              request_id: requestId,
            },
          });
        process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
        send({ status: 500, body: { error: 'internal', message: 'Internal error.', request_id: requestId } });
      },
    );
  });
  server.keepAliveTimeout = 72_000;
  server.listen(Number(env['PORT'] ?? 3100), env['HOST'] ?? '127.0.0.1', () => {
    process.stdout.write(`Ready in ${Math.round(performance.now() - started)} ms\n`);
  });
  process.once('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
