import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from 'pg';
import { freeLoopbackPort } from '../libs/net/free-port';
import { verifySignature } from '../libs/webhooks';
import type { Scope } from '../src/common/auth-context/access';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startServiceProcess, type ServiceProcess } from './support/service-process';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReplyPlan } from './support/https-receiver';
import { freshDatabase } from './support/test-database';
import type { TestService } from './support/test-service';
import { nth } from './support/defined';
import { withApp } from './support/with-app';
import { eventually, sleep } from './support/eventually';

const ORGANISER_SCOPES: Scope[] = ['events:read', 'orders:read', 'webhooks:read', 'webhooks:write'];
const VENUE_SCOPES: Scope[] = ['events:read', 'webhooks:read', 'webhooks:write'];
/** Small backoff and deadline so retries happen in milliseconds; 127.0.0.0/8 is where the receivers live. */
const DELIVERY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '200',
  WEBHOOK_POLL_MS: '50',
  // Short, for the timeout test, yet well beyond what a first attempt's TLS handshake can take on a
  // machine busy with the other test files: a first attempt timed out there is retried, and counted
  // twice, which every test that counts attempts would report as a failure.
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_MAX_ATTEMPTS: '25',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const deliveryIdOf = (request: ReceivedRequest): string => String(request.headers['service-delivery']);

/** Test data through the APIs, as integrators and the dashboard would make it. */
function world(publicUrl: string, adminUrl: string, adminToken: string) {
  const service = { publicUrl, adminUrl, adminToken } as TestService;
  const api = publicApi(service);
  const admin = internalApi(service);
  const make = fixtures(service);
  return {
    api,
    admin,
    organiser: (): Promise<Organiser> => make.organiser({ scopes: ORGANISER_SCOPES }),
    venue: (locations = 1) => make.venue({ scopes: VENUE_SCOPES, locations }),

    async subscribe(key: string, url: string, events: string[], extra: Record<string, unknown> = {}) {
      const created = await api('POST', '/v1/webhooks', { key, body: { url, events, ...extra } });
      assert.equal(created.status, 201, created.text);
      return created.body.data as { id: string; secret: string; enabled: boolean };
    },

    async event(organizerId: string, fields: Record<string, unknown> = {}) {
      const created = await admin('POST', '/internal/events', {
        body: { organizerId, title: { EN: 'Webhook test' }, startTime: '2030-05-01T18:00:00Z', ...fields },
      });
      assert.equal(created.status, 201, created.text);
      return created.body.data as {
        id: string;
        title: string | null;
        startTime: string;
        endTime: string | null;
        url: string;
      };
    },

    async publish(eventId: string) {
      const published = await admin('POST', `/internal/events/${eventId}/publish`);
      assert.equal(published.status, 200, published.text);
    },

    async order(eventId: string, fields: Record<string, unknown> = {}) {
      const created = await admin('POST', '/internal/orders', {
        body: {
          eventId,
          status: 'confirmed',
          lineItems: [{ quantity: 2, unitAmountMinor: 1500 }],
          totalAmountMinor: 3000,
          currency: 'eur',
          billingName: 'Zoë Ōtsuka',
          billingEmail: 'zoe@example.com',
          paymentProvider: 'stripe',
          ...fields,
        },
      });
      assert.equal(created.status, 201, created.text);
      return created.body.data as { id: string };
    },

    async deliveries(webhookId: string): Promise<any[]> {
      const listed = await admin('GET', `/internal/webhooks/${webhookId}/deliveries`);
      assert.equal(listed.status, 200, listed.text);
      return listed.body.data as any[];
    },

    async webhook(key: string, webhookId: string): Promise<any> {
      const listed = await api('GET', '/v1/webhooks', { key });
      return (listed.body.data as Array<{ id: string }>).find((webhook) => webhook.id === webhookId);
    },
  };
}

describe('webhook delivery', () => {
  let service: TestService;
  let w: ReturnType<typeof world>;
  const receivers: HttpsReceiver[] = [];

  const app = withApp(DELIVERY_ENV);
  before(async () => {
    ({ service } = app);
    w = world(service.publicUrl, service.adminUrl, service.adminToken);
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(plan?: ReplyPlan): Promise<HttpsReceiver> {
    const started = await startHttpsReceiver(plan);
    receivers.push(started);
    return started;
  }

  async function settled(webhookId: string, count = 1): Promise<any[]> {
    return eventually(async () => {
      const deliveries = await w.deliveries(webhookId);
      return deliveries.length >= count && deliveries.every((d) => d.status !== 'pending') ? deliveries : undefined;
    }, `${count} settled deliveries of ${webhookId}`);
  }

  it('signs each delivery over the raw body with the subscription secret and sends the contract envelope', async () => {
    const receiving = await receiver();
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/hooks/orders?source=events`, ['order.confirmed']);
    const event = await w.event(owner.id);
    const order = await w.order(event.id);

    const request = nth(await receiving.waitFor((requests) => requests.length >= 1), 0, 'received deliveries');
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/hooks/orders?source=events');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['user-agent'], 'Service-Webhooks/1.0');
    assert.equal(request.headers['service-event'], 'order.confirmed');
    const header = String(request.headers['service-signature']);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(Math.abs(Number(/^t=(\d+)/.exec(header)?.[1]) - Date.now() / 1000) < 30);
    assert.deepEqual(verifySignature({ secret: hook.secret, rawBody: request.rawBody, header }), { ok: true });
    // Re-serialised JSON is not what was signed.
    const reserialised = Buffer.from(JSON.stringify(request.body, null, 2));
    assert.deepEqual(verifySignature({ secret: hook.secret, rawBody: reserialised, header }), {
      ok: false,
      reason: 'signature_mismatch',
    });

    const envelope = request.body;
    assert.deepEqual(Object.keys(envelope), ['id', 'type', 'createdAt', 'principal', 'data']);
    assert.match(envelope.id, UUID);
    assert.equal(request.headers['service-delivery'], envelope.id);
    assert.equal(envelope.type, 'order.confirmed');
    assert.ok(!Number.isNaN(Date.parse(envelope.createdAt)));
    assert.deepEqual(envelope.principal, { type: 'organiser', id: owner.id });
    assert.deepEqual(envelope.data, {
      orderId: order.id,
      eventId: event.id,
      totalAmount: 3000,
      currency: 'EUR',
      isRsvp: false,
      quantity: 2,
      billingName: 'Zoë Ōtsuka',
      billingEmail: 'zoe@example.com',
      paymentProvider: 'stripe',
    });

    const [delivery] = await settled(hook.id);
    assert.deepEqual(Object.keys(delivery), [
      'id',
      'type',
      'status',
      'attempts',
      'lastStatus',
      'nextAttemptAt',
      'createdAt',
      'traceId',
      'attemptLog',
    ]);
    assert.equal(delivery.id, envelope.id);
    assert.equal(delivery.type, 'order.confirmed');
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatus, 200);
    assert.equal(delivery.nextAttemptAt, null);
    assert.equal(delivery.attemptLog.length, 1);
    assert.equal(delivery.attemptLog[0].outcome, 200);
    assert.ok(Number.isInteger(delivery.attemptLog[0].durationMs));
    const webhook = await w.webhook(owner.key, hook.id);
    assert.equal(webhook.lastStatus, 200);
    assert.equal(webhook.consecutiveFailures, 0);
  });

  it('retries after a 500 with the same delivery id and byte-identical bodies, each freshly signed', async () => {
    // Each 500 is held until just past the next second (at most 500 ms, within the deadline), so the
    // last retry starts in a later second than the first attempt: a signature made once would show it.
    const untilNextSecond = (): number => Math.min(500, 1_000 - (Date.now() % 1_000) + 20);
    const receiving = await receiver((_request, index) =>
      index < 2 ? { status: 500, delayMs: untilNextSecond() } : { status: 204 },
    );
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);

    const requests = await receiving.waitFor((all) => all.length >= 3);
    const [first, ...retries] = requests;
    assert.ok(first, 'the first attempt arrived');
    const signed = (request: ReceivedRequest) => {
      const header = String(request.headers['service-signature']);
      const [, t = '', v1 = ''] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
      return { header, t: Number(t), v1 };
    };
    for (const request of requests) {
      const { t } = signed(request);
      const late = Math.floor(request.receivedAt / 1000) - t;
      assert.ok(late === 0 || late === 1, `t=${t} is the time of the attempt, not ${late} s before it arrived`);
    }
    for (const retry of retries) {
      assert.equal(deliveryIdOf(retry), deliveryIdOf(first));
      assert.ok(retry.rawBody.equals(first.rawBody), 'retry body differs from the first attempt');
      const { header } = signed(retry);
      assert.deepEqual(verifySignature({ secret: hook.secret, rawBody: retry.rawBody, header }), { ok: true });
    }
    const last = signed(nth(retries, retries.length - 1, 'retries'));
    assert.ok(last.t > signed(first).t, `the last retry's t=${last.t} is later than the first attempt's`);
    assert.notEqual(last.v1, signed(first).v1, 'the last retry has a signature of its own');
    const [delivery] = await settled(hook.id);
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attempts, 3);
    assert.deepEqual(
      delivery.attemptLog.map((attempt: { outcome: unknown }) => attempt.outcome),
      [500, 500, 204],
    );
    const webhook = await w.webhook(owner.key, hook.id);
    assert.equal(webhook.lastStatus, 204);
    assert.equal(webhook.consecutiveFailures, 0);
  });

  it('retries after a timeout with byte-identical bodies', async () => {
    // WEBHOOK_TIMEOUT_MS is 2000: the first answer, after 2.2 s, comes too late.
    const receiving = await receiver((_request, index) => ({ status: 200, delayMs: index === 0 ? 2_200 : 0 }));
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/slow`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);

    const [first, second] = await receiving.waitFor((all) => all.length >= 2);
    assert.ok(first && second, 'the late attempt and its retry arrived');
    assert.equal(deliveryIdOf(second), deliveryIdOf(first));
    assert.ok(second.rawBody.equals(first.rawBody));
    const [delivery] = await settled(hook.id);
    assert.deepEqual(
      delivery.attemptLog.map((attempt: { outcome: unknown }) => attempt.outcome),
      ['timeout', 200],
    );
    assert.ok(delivery.attemptLog[0].durationMs >= 1_950, `timeout after ${delivery.attemptLog[0].durationMs} ms`);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const elsewhere = await receiver();
    const receiving = await receiver((_request, index) =>
      index === 0 ? { status: 302, headers: { location: `${elsewhere.origin}/moved` } } : { status: 200 },
    );
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);

    const [delivery] = await settled(hook.id);
    assert.deepEqual(
      delivery.attemptLog.map((attempt: { outcome: unknown }) => attempt.outcome),
      [302, 200],
    );
    assert.equal(elsewhere.requests.length, 0);
    assert.equal(receiving.requests.length, 2);
  });

  it('records a refused connection as network_error and retries it', async () => {
    const port = await freeLoopbackPort();
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `https://127.0.0.1:${port}/in`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);
    const webhook = await eventually(async () => {
      const found = await w.webhook(owner.key, hook.id);
      return found.consecutiveFailures >= 2 ? found : undefined;
    }, 'two failed attempts');
    assert.equal(webhook.lastStatus, 'network_error');
    const [delivery] = await w.deliveries(hook.id);
    assert.equal(delivery.status, 'pending');
    assert.ok(delivery.attemptLog.every((attempt: { outcome: unknown }) => attempt.outcome === 'network_error'));
    await w.api('DELETE', `/v1/webhooks/${hook.id}`, { key: owner.key });
  });

  it('drops a delivery whose host now resolves to a refused address, as blocked_host, without retrying', async () => {
    const receiving = await receiver();
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    // The address behind a name can change after subscribing; here the stored url moves outside the allow-list.
    const client = new Client({ connectionString: service.databaseUrl });
    await client.connect();
    try {
      const port = new URL(receiving.origin).port;
      await client.query(`UPDATE webhook_subscription SET url = $2 WHERE id = $1`, [
        hook.id,
        `https://[::1]:${port}/in`,
      ]);
    } finally {
      await client.end();
    }
    await w.order((await w.event(owner.id)).id);

    const [delivery] = await settled(hook.id);
    assert.equal(delivery.status, 'dropped');
    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.lastStatus, 'blocked_host');
    assert.equal(delivery.attemptLog[0].outcome, 'blocked_host');
    assert.equal((await w.webhook(owner.key, hook.id)).lastStatus, 'blocked_host');
    assert.equal(receiving.requests.length, 0);
  });

  it('disables a subscription after 20 consecutive failures, and enable resets the count to 0', async () => {
    const receiving = await receiver(() => ({ status: 500 }));
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/down`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);

    const disabled = await eventually(
      async () => {
        const found = await w.webhook(owner.key, hook.id);
        return found.enabled ? undefined : found;
      },
      'the subscription to be disabled',
      20_000,
    );
    assert.equal(disabled.consecutiveFailures, 20);
    assert.equal(disabled.lastStatus, 500);
    await sleep(400);
    assert.equal(receiving.requests.length, 20, 'a disabled subscription got another attempt');
    const [waiting] = await w.deliveries(hook.id);
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.attempts, 20);

    receiving.reply(() => ({ status: 200 }));
    const enabled = await w.admin('POST', `/internal/webhooks/${hook.id}/enable`);
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.data.enabled, true);
    assert.equal(enabled.body.data.consecutiveFailures, 0);
    const [delivered] = await settled(hook.id);
    assert.equal(delivered.status, 'succeeded');
    assert.equal(delivered.attempts, 21);
  });

  it('emits one delivery per fact: publishing twice, confirming twice and rewriting add nothing', async () => {
    const receiving = await receiver();
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed', 'event.published']);
    const event = await w.event(owner.id);
    await w.publish(event.id);
    await w.publish(event.id);

    const pending = await w.order(event.id, { status: 'pending' });
    for (let i = 0; i < 2; i += 1) {
      assert.equal((await w.admin('POST', `/internal/orders/${pending.id}/confirm`)).status, 200);
    }
    const direct = await w.order(event.id);
    assert.equal((await w.admin('POST', `/internal/orders/${direct.id}/confirm`)).status, 200);
    for (const orderId of [pending.id, direct.id]) {
      const rewritten = await w.admin('PATCH', `/internal/orders/${orderId}`, { body: { billingName: 'Renamed' } });
      assert.equal(rewritten.status, 200, rewritten.text);
    }

    await settled(hook.id, 3);
    await sleep(300);
    const deliveries = await w.deliveries(hook.id);
    assert.equal(deliveries.length, 3);
    assert.deepEqual(deliveries.map((d) => d.type).sort(), ['event.published', 'order.confirmed', 'order.confirmed']);
    assert.equal(new Set(receiving.requests.map(deliveryIdOf)).size, 3);
    const orderIds = receiving.requests
      .filter((request) => request.body.type === 'order.confirmed')
      .map((request) => request.body.data.orderId)
      .sort();
    assert.deepEqual(orderIds, [pending.id, direct.id].sort());
  });

  it('fans event.published out to the organiser and to each venue at the event location, each with its principal', async () => {
    const toOrganiser = await receiver();
    const toVenue = await receiver();
    const toOtherVenue = await receiver();
    const owner = await w.organiser();
    const place = await w.venue(2);
    const otherPlace = await w.venue();
    const organiserHook = await w.subscribe(owner.key, `${toOrganiser.origin}/o`, ['event.published']);
    const venueHook = await w.subscribe(place.key, `${toVenue.origin}/v`, ['event.published']);
    await w.subscribe(otherPlace.key, `${toOtherVenue.origin}/x`, ['event.published']);
    const event = await w.event(owner.id, {
      title: { EN: 'Opening night' },
      endTime: '2030-05-01T23:00:00Z',
      locationId: place.locationIds[1],
    });
    await w.publish(event.id);

    const forOrganiser = nth(await toOrganiser.waitFor((all) => all.length >= 1), 0, 'deliveries to the organiser');
    const forVenue = nth(await toVenue.waitFor((all) => all.length >= 1), 0, 'deliveries to the venue');
    assert.deepEqual(forOrganiser.body.principal, { type: 'organiser', id: owner.id });
    assert.deepEqual(forVenue.body.principal, { type: 'venue', id: place.id });
    const expectedData = {
      eventId: event.id,
      title: 'Opening night',
      startTime: event.startTime,
      endTime: event.endTime,
      url: event.url,
    };
    assert.deepEqual(forOrganiser.body.data, expectedData);
    assert.deepEqual(forVenue.body.data, expectedData);
    assert.notEqual(forOrganiser.body.id, forVenue.body.id);
    for (const [request, secret] of [
      [forOrganiser, organiserHook.secret],
      [forVenue, venueHook.secret],
    ] as const) {
      const header = String(request.headers['service-signature']);
      assert.deepEqual(verifySignature({ secret, rawBody: request.rawBody, header }), { ok: true });
    }
    await settled(organiserHook.id);
    await settled(venueHook.id);
    await sleep(200);
    assert.equal(toOrganiser.requests.length, 1);
    assert.equal(toVenue.requests.length, 1);
    assert.equal(toOtherVenue.requests.length, 0);
  });

  it('sends nothing to disabled or deleted subscriptions, nor to those of other event types', async () => {
    const receiving = await receiver();
    const owner = await w.organiser();
    const disabled = await w.subscribe(owner.key, `${receiving.origin}/disabled`, ['order.confirmed'], {
      enabled: false,
    });
    const deleted = await w.subscribe(owner.key, `${receiving.origin}/deleted`, ['order.confirmed']);
    assert.equal((await w.api('DELETE', `/v1/webhooks/${deleted.id}`, { key: owner.key })).status, 200);
    await w.subscribe(owner.key, `${receiving.origin}/other-type`, ['event.published']);
    const active = await w.subscribe(owner.key, `${receiving.origin}/active`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);

    await settled(active.id);
    await sleep(300);
    assert.deepEqual(
      receiving.requests.map((request) => request.path),
      ['/active'],
    );
    // A disabled subscription records what it missed, unsent, for recovery (internal-api.md "skipped").
    assert.deepEqual(
      (await w.deliveries(disabled.id)).map((delivery) => [delivery.status, delivery.attempts]),
      [['skipped', 0]],
    );
    assert.deepEqual(await w.deliveries(deleted.id), []);
  });

  it('does not recall a delivery in flight when its subscription is deleted: the attempt completes and is recorded', async () => {
    const receiving = await receiver(() => ({ status: 200, delayMs: 800 }));
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in-flight`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);
    await receiving.waitFor((all) => all.length >= 1);
    assert.equal((await w.api('DELETE', `/v1/webhooks/${hook.id}`, { key: owner.key })).status, 200);
    const recorded = await eventually(async () => {
      const [delivery] = await w.deliveries(hook.id);
      return delivery?.status === 'pending' ? undefined : delivery;
    }, 'the attempt in flight to be recorded');
    assert.deepEqual([recorded?.status, recorded?.attempts], ['succeeded', 1]);
    assert.equal(receiving.requests.length, 1);
  });

  it("holds a failing subscription's other deliveries back and probes with the oldest until a 2xx", async () => {
    const receiving = await receiver(() => ({ status: 503 }));
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    const event = await w.event(owner.id);
    await w.order(event.id);
    await receiving.waitFor((all) => all.length >= 2);
    const probeId = deliveryIdOf(nth(receiving.requests, 0, 'received deliveries'));

    for (let i = 0; i < 3; i += 1) await w.order(event.id);
    await receiving.waitFor((all) => all.length >= 6);
    assert.deepEqual(
      [...new Set(receiving.requests.map(deliveryIdOf))],
      [probeId],
      'a delivery other than the probe was attempted while the subscription was failing',
    );

    const failuresSeen = receiving.requests.length;
    receiving.reply(() => ({ status: 200 }));
    const deliveries = await settled(hook.id, 4);
    assert.ok(deliveries.every((delivery) => delivery.status === 'succeeded'));
    assert.equal(
      deliveryIdOf(nth(receiving.requests, failuresSeen, 'received deliveries')),
      probeId,
      'the first success was not the probe',
    );
    assert.equal(new Set(receiving.requests.map(deliveryIdOf)).size, 4);
    assert.equal((await w.webhook(owner.key, hook.id)).consecutiveFailures, 0);
  });

  it('keeps at most four attempts in flight per subscription', async () => {
    const receiving = await receiver(() => ({ status: 200, delayMs: 150 }));
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    const event = await w.event(owner.id);
    await Promise.all(Array.from({ length: 10 }, () => w.order(event.id)));

    await settled(hook.id, 10);
    assert.equal(new Set(receiving.requests.map(deliveryIdOf)).size, 10);
    assert.ok(receiving.maxInFlight <= 4, `${receiving.maxInFlight} attempts were in flight at once`);
    assert.ok(receiving.maxInFlight >= 2, 'deliveries were not sent in parallel at all');
  });

  it('delivers a fact once per subscription: a confirmation repeated, a publication repeated, a resend of it', async () => {
    const receiving = await receiver();
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/once`, ['order.confirmed', 'event.published']);
    const event = await w.event(owner.id);
    const order = await w.order(event.id, { status: 'pending' });
    // The same facts made true again and again, at once and after the first ones were delivered.
    const confirm = () => w.admin('POST', `/internal/orders/${order.id}/confirm`);
    const publish = () => w.admin('POST', `/internal/events/${event.id}/publish`);
    for (const answer of await Promise.all([confirm(), confirm(), confirm(), publish(), publish(), publish()])) {
      assert.equal(answer.status, 200, answer.text);
    }
    const delivered = await settled(hook.id, 2);
    for (const answer of await Promise.all([confirm(), publish()])) assert.equal(answer.status, 200, answer.text);
    const resent = await w.admin('POST', `/internal/webhooks/${hook.id}/deliveries/${delivered[0].id}/resend`, {
      body: {},
    });
    assert.equal(resent.status, 202, resent.text);
    await receiving.waitFor((requests) => requests.length >= 3);

    const deliveries = await settled(hook.id, 2);
    assert.deepEqual(deliveries.map((delivery) => delivery.type).sort(), ['event.published', 'order.confirmed']);
    assert.deepEqual(
      deliveries.map((delivery) => delivery.id).sort(),
      delivered.map((delivery) => delivery.id).sort(),
      'a resend is the same delivery again',
    );
    assert.deepEqual(
      receiving.requests.map(deliveryIdOf).sort(),
      [...delivered.map((delivery) => delivery.id as string), delivered[0].id as string].sort(),
    );
  });
});

/**
 * The retry schedule, with a base long enough to measure (hundreds of ms) and
 * short enough to keep the wait small: each receiver holds the attempt after
 * the one measured, so the delivery log still shows the wait that attempt was
 * given (nextAttemptAt) next to when the measured attempt ended.
 */
describe('webhook retry schedule', () => {
  const BASE_MS = 300;
  const JITTER = 0.2;
  /** Between an attempt's end and the write of its outcome (one batched statement); generous for a busy machine. */
  const WRITE_SLACK_MS = 150;
  /** How long a receiver holds the next attempt while the log is read; well within the deadline below. */
  const HOLD_MS = 600;
  const app = withApp({
    ...DELIVERY_ENV,
    WEBHOOK_BACKOFF_BASE_MS: String(BASE_MS),
    WEBHOOK_BACKOFF_MAX_MS: '5000',
    WEBHOOK_TIMEOUT_MS: '3000',
  });
  let w: ReturnType<typeof world>;
  const receivers: HttpsReceiver[] = [];
  before(() => {
    w = world(app.service.publicUrl, app.service.adminUrl, app.service.adminToken);
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  type Answer = { status: number; headers?: Record<string, string> };
  /** A subscription whose receiver answers attempt n (from 0) with `replies[n]`, each but the first held a while. */
  async function failingDelivery(replies: Array<Answer | (() => Answer)>) {
    const receiving = await startHttpsReceiver((_request, index) => {
      const reply = replies[index] ?? { status: 200 };
      return { ...(typeof reply === 'function' ? reply() : reply), delayMs: index === 0 ? 0 : HOLD_MS };
    });
    receivers.push(receiving);
    const owner = await w.organiser();
    const hook = await w.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    await w.order((await w.event(owner.id)).id);
    return {
      /**
       * The wait scheduled after attempt `n` (from 1), nextAttemptAt less the end of that attempt, and
       * nextAttemptAt itself (epoch ms), read while attempt n + 1 is held.
       */
      async waitAfter(n: number): Promise<{ waited: number; nextAttemptAt: number }> {
        await receiving.waitFor((requests) => requests.length >= n + 1);
        const [delivery] = await w.deliveries(hook.id);
        assert.equal(delivery.attempts, n, `the log shows attempt ${n} while attempt ${n + 1} is held`);
        // The log runs oldest first.
        const attempt = nth(delivery.attemptLog as Array<{ at: string; durationMs: number }>, n - 1, 'logged attempts');
        const nextAttemptAt = Date.parse(delivery.nextAttemptAt);
        return { waited: nextAttemptAt - (Date.parse(attempt.at) + attempt.durationMs), nextAttemptAt };
      },
    };
  }

  it('waits base·2^(n−1) ±20% after failed attempt n: about 300 ms after the first 500, about 600 ms after the second', async () => {
    const delivery = await failingDelivery([{ status: 500 }, { status: 500 }]);
    for (const n of [1, 2]) {
      const nominal = BASE_MS * 2 ** (n - 1);
      const { waited } = await delivery.waitAfter(n);
      assert.ok(
        waited >= nominal * (1 - JITTER) - 5 && waited <= nominal * (1 + JITTER) + WRITE_SLACK_MS,
        `attempt ${n} was followed by a wait of ${waited} ms, not ${nominal} ms ±20%`,
      );
    }
  });

  it("takes a receiver's Retry-After, in seconds or as an HTTP date, on a 429 or a 503 as the next wait, and ignores it on a 500", async () => {
    // Retry-After asks for one to two seconds (within the schedule's bounds of 300 ms to 5 s); the backoff alone would wait 240 to 360 ms.
    const inOneSecond = { 'retry-after': '1' };
    let dated = NaN;
    const untilDate = () => {
      // One to two seconds ahead, on a whole second as an HTTP date has it.
      dated = Math.ceil((Date.now() + 1_000) / 1_000) * 1_000;
      return { status: 503, headers: { 'retry-after': new Date(dated).toUTCString() } };
    };
    const deliveries = await Promise.all([
      failingDelivery([{ status: 429, headers: inOneSecond }]),
      failingDelivery([{ status: 503, headers: inOneSecond }]),
      failingDelivery([{ status: 500, headers: inOneSecond }]),
      failingDelivery([untilDate]),
    ]);
    const [tooMany, unavailable, failed, unavailableUntil] = await Promise.all(
      deliveries.map((delivery) => delivery.waitAfter(1)),
    );
    const within = (value: number, low: number, high: number, what: string) =>
      assert.ok(value >= low - 5 && value <= high + WRITE_SLACK_MS, `${what}: ${value} ms`);
    within(tooMany?.waited ?? NaN, 1_000, 1_000, 'a 429 with Retry-After: 1 was followed by');
    within(unavailable?.waited ?? NaN, 1_000, 1_000, 'a 503 with Retry-After: 1 was followed by');
    within(
      failed?.waited ?? NaN,
      BASE_MS * (1 - JITTER),
      BASE_MS * (1 + JITTER),
      'a 500 with Retry-After: 1 was followed by',
    );
    within(
      (unavailableUntil?.nextAttemptAt ?? NaN) - dated,
      0,
      0,
      'a 503 with Retry-After as an HTTP date: due after the date by',
    );
  });
});

describe('webhook delivery across a crash', () => {
  const processes: ServiceProcess[] = [];
  let receiving: HttpsReceiver;

  before(async () => {
    receiving = await startHttpsReceiver(() => 'hang');
  });
  after(async () => {
    for (const running of processes) {
      if (running.child.exitCode === null) running.child.kill('SIGKILL');
      await running.exited;
    }
    await receiving.close();
  });

  it('delivers every delivery at least once after the service is SIGKILLed mid-delivery and restarted', async () => {
    const adminToken = randomBytes(16).toString('hex');
    const env: Record<string, string> = {
      ...DELIVERY_ENV,
      // The lease is the deadline plus 5 s; a short deadline keeps the wait for the killed attempts short.
      WEBHOOK_TIMEOUT_MS: '1000',
      DATABASE_URL: await freshDatabase(),
      ADMIN_TOKEN: adminToken,
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      PUBLIC_WEB_URL: 'https://events.example.test',
      DATA_DIR: join(process.env['TEST_RECEIVER_CERT_DIR'] ?? '.data', 'crash-test'),
      LOG_LEVEL: 'silent',
    };
    const first = await startServiceProcess(env);
    processes.push(first);
    const before = world(first.publicUrl, first.adminUrl, adminToken);
    const owner = await before.organiser();
    const hook = await before.subscribe(owner.key, `${receiving.origin}/in`, ['order.confirmed']);
    const event = await before.event(owner.id);
    for (let i = 0; i < 6; i += 1) await before.order(event.id);

    // Four attempts hang in flight (the per-subscription cap), two wait in the queue.
    await receiving.waitFor((all) => all.length >= 4);
    first.child.kill('SIGKILL');
    await first.exited;
    const beforeCrash = receiving.requests.length;
    receiving.reply(() => ({ status: 200 }));

    const second = await startServiceProcess(env);
    processes.push(second);
    const after = world(second.publicUrl, second.adminUrl, adminToken);
    const deliveries = await eventually(
      async () => {
        const all = await after.deliveries(hook.id);
        return all.length === 6 && all.every((delivery) => delivery.status === 'succeeded') ? all : undefined;
      },
      'all six deliveries to succeed after the restart',
      30_000,
    );
    const answered = new Set(receiving.requests.slice(beforeCrash).map(deliveryIdOf));
    for (const delivery of deliveries) assert.ok(answered.has(delivery.id), `${delivery.id} never arrived`);
    // What was in flight at the kill is sent again byte for byte.
    for (const early of receiving.requests.slice(0, beforeCrash)) {
      const again = receiving.requests.slice(beforeCrash).find((later) => deliveryIdOf(later) === deliveryIdOf(early));
      assert.ok(again?.rawBody.equals(early.rawBody), 'the resent body differs');
    }
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
