import createClient from 'openapi-fetch';
import type { components, paths } from './public-api';

type Event = components['schemas']['Event'];

export interface FlowResult {
  eventsListed: number;
  pages: number;
  created: Event;
  replayed: boolean;
  notModified: boolean;
  patched: Event;
  staleWriteRefused: string;
  ordersListed: number;
  webhookCreatedAndDeleted: boolean;
}

function ok<T>(value: T | undefined, what: string, status: number): T {
  if (value === undefined) throw new Error(`${what} answered ${status}`);
  return value;
}

/**
 * An integrator's first program, typed from the served document by
 * openapi-typescript and run with openapi-fetch: every path, parameter,
 * header and body below is checked by the compiler against the document.
 * `webhookUrl` must be an https URL the service accepts.
 */
export async function walkPublicFlow(baseUrl: string, apiKey: string, webhookUrl: string): Promise<FlowResult> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  // Create with an Idempotency-Key; a retry with the same key replays the response and creates nothing.
  const idempotencyKey = `flow-${Date.now()}`;
  const body = { title: { en: 'Typed client night' }, startTime: '2027-06-01T19:00:00Z', visibility: 'draft' as const };
  const first = await api.POST('/v1/events', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body });
  const created = ok(first.data, 'POST /v1/events', first.response.status).data;
  const retry = await api.POST('/v1/events', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body });
  const replayed = retry.response.headers.get('Idempotent-Replayed') === 'true' && retry.data?.data.id === created.id;

  // List every event, following next_cursor until has_more is false.
  let cursor: string | undefined;
  let eventsListed = 0;
  let pages = 0;
  do {
    const page = await api.GET('/v1/events', { params: { query: { limit: 2, cursor } } });
    const { data, has_more, next_cursor } = ok(page.data, 'GET /v1/events', page.response.status);
    eventsListed += data.length;
    pages += 1;
    cursor = has_more && next_cursor !== null ? next_cursor : undefined;
  } while (cursor !== undefined);

  // Read it with its ETag; asking again with If-None-Match costs no body (304).
  const path = { eventId: created.id };
  const read = await api.GET('/v1/events/{eventId}', { params: { path } });
  const etag = ok(read.response.headers.get('ETag') ?? undefined, 'ETag of GET /v1/events/{eventId}', 200);
  const again = await api.GET('/v1/events/{eventId}', { params: { path, header: { 'If-None-Match': etag } } });
  const notModified = again.response.status === 304;

  // Update only if nobody changed it since the read; the old ETag then no longer matches (412).
  const update = await api.PATCH('/v1/events/{eventId}', {
    params: { path, header: { 'If-Match': etag } },
    body: { title: { en: 'Typed client night, renamed' }, visibility: 'unlisted' },
  });
  const patched = ok(update.data, 'PATCH /v1/events/{eventId}', update.response.status).data;
  const stale = await api.PATCH('/v1/events/{eventId}', {
    params: { path, header: { 'If-Match': etag } },
    body: { tags: ['late'] },
  });
  const staleWriteRefused = stale.error?.error ?? `unexpected ${stale.response.status}`;

  // Orders of the organiser's events.
  const orders = await api.GET('/v1/orders', { params: { query: { limit: 100 } } });
  const ordersListed = ok(orders.data, 'GET /v1/orders', orders.response.status).data.length;

  // Subscribe (the response carries the signing secret), then delete the subscription.
  const subscribed = await api.POST('/v1/webhooks', {
    body: { url: webhookUrl, events: ['event.published'], description: 'typed client' },
  });
  const webhook = ok(subscribed.data, 'POST /v1/webhooks', subscribed.response.status).data;
  const deleted = await api.DELETE('/v1/webhooks/{webhookId}', { params: { path: { webhookId: webhook.id } } });
  const webhookCreatedAndDeleted = webhook.secret.startsWith('whsec_') && deleted.data?.data.deleted === true;

  return {
    eventsListed,
    pages,
    created,
    replayed,
    notModified,
    patched,
    staleWriteRefused,
    ordersListed,
    webhookCreatedAndDeleted,
  };
}
