import { DEFAULT_LIMIT, MAX_LIMIT } from '../pagination/page-request';

/** The rate budget as configured, shown in the introduction. */
export interface RateFigures {
  reads: number;
  writes: number;
  windowSeconds: number;
}

/**
 * `info.description` of the public document: the conventions every
 * operation follows, so the reference page opens with them instead of
 * leaving them to docs/api.md. Markdown, as OpenAPI allows.
 */
export function publicIntroduction(rates: RateFigures): string {
  return `The public REST API through which event organisers and venues reach their own events, orders and webhook subscriptions. Every response is filtered to the principal (organiser or venue) the API key belongs to.

## Authentication
Send \`Authorization: Bearer svc_live_…\` on every request. Keys are minted in the dashboard; a missing, malformed, unknown or revoked key gets \`401 unauthorized\`, a key without the scope (or of a principal type the route does not serve) \`403 insufficient_scope\`.

## Envelopes
- Every success body is an object with \`data\`. \`GET /v1\` also has its members at the top level.
- Every list is a page: \`{data, has_more, next_cursor}\`, even where a second page is impossible.
- Every error is \`{error, message, request_id}\`. Branch on \`error\` (a stable code); \`message\` is for people. Each response below lists the exact codes its status can carry.
- Unknown paths answer \`404 not_found\`; a known path with another method \`405 method_not_allowed\` with \`Allow\`. \`HEAD\` is served wherever \`GET\` is.
- Any query parameter an endpoint does not accept is \`400 unsupported_parameter\`; nothing is ignored.
- Timestamps out are ISO 8601 UTC with milliseconds; in, ISO 8601 or epoch milliseconds. Money is integer minor units beside an uppercase ISO 4217 \`currency\`.

## Paging
\`limit\` is 1 to ${MAX_LIMIT} (larger values clamp to ${MAX_LIMIT}; missing, zero, negative or non-numeric give ${DEFAULT_LIMIT}). Pass \`next_cursor\` back as \`cursor\` until \`has_more\` is \`false\`. A cursor belongs to one list and one ordering: changing \`updated_after\` or the list gives \`400 invalid_cursor\`.

\`updated_after\` (ISO 8601 or epoch ms) returns rows updated at or after the instant, ordered by \`updatedAt\` ascending. Use webhooks as the trigger and an \`updated_after\` poll as the backstop: poll from 5 minutes before the largest \`updatedAt\` you processed and deduplicate by \`id\` and \`updatedAt\`.

## Idempotency
\`POST /v1/events\` requires \`Idempotency-Key\` (an opaque string, kept 7 days per organiser). A repeat with a key that already succeeded replays the stored status, body, \`ETag\` and \`Location\` with \`Idempotent-Replayed: true\` and creates nothing; a key whose attempt failed is treated as new.

## ETags
\`GET\` and \`PATCH /v1/events/{eventId}\` return a strong \`ETag\` over the body. \`If-None-Match\` answers \`304\` when nothing visible changed; \`If-Match\` on \`PATCH\` (an ETag, or \`*\`) gives \`412 precondition_failed\` when the event changed, and nothing is written.

## Rate limits
Per account (every key of one organiser or venue shares one budget), fixed ${rates.windowSeconds}-second windows: ${rates.reads} reads (\`GET\`, \`HEAD\`) and ${rates.writes} writes (\`POST\`, \`PATCH\`, \`DELETE\`). Every authenticated response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds); \`429 rate_limited\` adds \`Retry-After\` (seconds).

## Request ids
Every response carries \`X-Request-Id\`; error bodies repeat it as \`request_id\`. Send your own (1 to 64 characters of \`A-Z a-z 0-9 - _ . : + / =\`) to have it echoed.

## Webhooks
Subscriptions (\`/v1/webhooks\`) receive HTTPS \`POST\` deliveries, described under **Webhooks** in this document. Each delivery is signed: \`Service-Signature: t=<unix seconds>,v1=<hex>\`, where \`v1\` is HMAC-SHA256 keyed with the whole \`whsec_…\` secret over \`<t>.<raw body>\`. To verify:

1. Read the raw body bytes (re-serialised JSON does not verify).
2. Compute \`HMAC-SHA256(secret, t + "." + rawBody)\` in hex and compare it with each \`v1\` value in constant time.
3. Reject a \`t\` more than 300 seconds from your clock.
4. Deduplicate on the envelope's \`id\` (equal to \`Service-Delivery\`, but inside the signed body): delivery is at least once.
5. Answer any 2xx within 10 seconds. Anything else is retried with exponential backoff; 20 consecutive failures disable the subscription.
`;
}

export const INTERNAL_INTRODUCTION = `The internal API behind the dashboard: organisers, keys, venues, event publication, order confirmation and webhook operations. Served only on the admin listener (\`ADMIN_HOST:ADMIN_PORT\`), never on the public one. Every request carries \`Authorization: Bearer <ADMIN_TOKEN>\` (anything else: \`401 unauthorized\`). Success bodies are \`{data}\`; errors are the public \`{error, message, request_id}\` with the public codes plus \`409 conflict\`. No account budget applies; a client address that sends too many requests with a wrong or missing token in a minute gets \`429 rate_limited\` until the minute ends (\`RATE_LIMIT_FAILURES_PER_CLIENT\`).`;
