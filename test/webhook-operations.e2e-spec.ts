import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { verifySignature } from '../libs/webhooks';
import type { Scope } from '../src/common/auth-context/access';
import { DeliveryClaimRepository } from '../src/webhooks/delivery/delivery-claim.repository';
import { WebhookRetentionService } from '../src/webhooks/retention/webhook-retention.service';
import { databaseClient } from './support/database-client';
import { assertErrorBody } from './support/error-body';
import { fixtures, type Organiser } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReplyPlan } from './support/https-receiver';
import { startTestService, type TestService } from './support/test-service';
import { defined, nth } from './support/defined';
import { eventually, sleep } from './support/eventually';
import { stripeSdk } from './support/stripe-sdk';
import { ensureHistoryDay } from './support/webhook-rows';
import { insertFailedHistoryDeliveries } from './support/webhook-rows';

const SCOPES: Scope[] = ['events:read', 'orders:read', 'webhooks:read', 'webhooks:write'];
/** Small backoff and deadline so retries happen in milliseconds; 127.0.0.0/8 is where the receivers live. */
const DELIVERY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '30',
  WEBHOOK_BACKOFF_MAX_MS: '120',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_MAX_ATTEMPTS: '40',
  LOG_LEVEL: 'warn',
};
const TRACE_ID = /^[0-9a-f]{32}$/;

const deliveryIdOf = (request: ReceivedRequest): string => String(request.headers['service-delivery']);
const orderIdOf = (request: ReceivedRequest): string => String(request.body?.data?.orderId);

describe('webhook operations', () => {
  let service: TestService;
  let api: ReturnType<typeof publicApi>;
  let admin: ReturnType<typeof internalApi>;
  let db: Client;
  const receivers: HttpsReceiver[] = [];
  const logLines: Array<Record<string, unknown>> = [];

  before(async () => {
    const logs = new PassThrough();
    let partial = '';
    logs.on('data', (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    });
    service = await startTestService(DELIVERY_ENV, { logTo: logs });
    api = publicApi(service);
    admin = internalApi(service);
    db = await databaseClient(service.databaseUrl);
  });
  after(async () => {
    await db.end();
    await service.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });

  async function receiver(plan?: ReplyPlan): Promise<HttpsReceiver> {
    const started = await startHttpsReceiver(plan);
    receivers.push(started);
    return started;
  }

  const organiser = (): Promise<Organiser> => fixtures(service).organiser({ scopes: SCOPES });

  async function subscribe(key: string, url: string, extra: Record<string, unknown> = {}) {
    const created = await api('POST', '/v1/webhooks', { key, body: { url, events: ['order.confirmed'], ...extra } });
    assert.equal(created.status, 201, created.text);
    return created.body.data as { id: string; secret: string; enabled: boolean };
  }

  async function event(organizerId: string): Promise<string> {
    const created = await admin('POST', '/internal/events', {
      body: { organizerId, title: { EN: 'Operations' }, startTime: '2030-05-01T18:00:00Z' },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data.id as string;
  }

  async function order(eventId: string, headers: Record<string, string> = {}): Promise<string> {
    const created = await admin('POST', '/internal/orders', {
      body: { eventId, status: 'confirmed', lineItems: [{ quantity: 1, unitAmountMinor: 900 }], totalAmountMinor: 900 },
      headers,
    });
    assert.equal(created.status, 201, created.text);
    return created.body.data.id as string;
  }

  async function deliveries(webhookId: string): Promise<any[]> {
    const listed = await admin('GET', `/internal/webhooks/${webhookId}/deliveries`);
    assert.equal(listed.status, 200, listed.text);
    return listed.body.data as any[];
  }

  async function settled(webhookId: string, count = 1): Promise<any[]> {
    return eventually(async () => {
      const all = await deliveries(webhookId);
      return all.length >= count && all.every((d) => d.status !== 'pending') ? all : undefined;
    }, `${count} settled deliveries of ${webhookId}`);
  }

  async function detail(webhookId: string): Promise<any> {
    const shown = await admin('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(shown.status, 200, shown.text);
    return shown.body.data;
  }

  describe('resend', () => {
    it('sends the same delivery id and body bytes again with a new valid signature, logged as a manual attempt', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/in`);
      await order(await event(owner.id));
      const [delivered] = await settled(hook.id);
      await sleep(1_100); // a later second, so the fresh signature differs from the first

      const resent = await admin('POST', `/internal/webhooks/${hook.id}/deliveries/${delivered.id}/resend`, {
        body: {},
      });
      assert.equal(resent.status, 202, resent.text);
      assert.equal(resent.body.data.id, delivered.id);
      assert.equal(resent.body.data.status, 'pending');

      await receiving.waitFor((all) => all.length >= 2);
      const [first, second] = receiving.requests;
      assert.ok(first && second, 'the delivery and its resend arrived');
      assert.equal(deliveryIdOf(second), delivered.id);
      assert.equal(second.headers['webhook-id'], delivered.id);
      assert.ok(second.rawBody.equals(first.rawBody), 'the resend carries different bytes');
      assert.notEqual(second.headers['service-signature'], first.headers['service-signature']);
      const header = second.headers['service-signature'] as string;
      assert.deepEqual(verifySignature({ secret: hook.secret, rawBody: second.rawBody, header }), { ok: true });

      const [after] = await settled(hook.id);
      assert.equal(after.status, 'succeeded');
      assert.equal(after.attempts, 2);
      assert.deepEqual(
        after.attemptLog.map((attempt: { trigger: string }) => attempt.trigger),
        ['scheduled', 'manual'],
      );
    });

    it('resends a delivery made before envelopes carried principal with its original body, organizerId and all, byte for byte', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/legacy`);
      const id = randomUUID();
      const original = Buffer.from(
        JSON.stringify({
          id,
          type: 'order.confirmed',
          createdAt: '2026-01-05T10:00:00.000Z',
          organizerId: owner.id,
          data: { id: 'ord_legacy', status: 'confirmed' },
        }),
      );
      await db.query(
        `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, attempts)
         VALUES ($1, $2, 'order.confirmed', 'ord_legacy', $3, 'succeeded', 1)`,
        [id, hook.id, original],
      );
      const resent = await admin('POST', `/internal/webhooks/${hook.id}/deliveries/${id}/resend`, { body: {} });
      assert.equal(resent.status, 202, resent.text);
      await receiving.waitFor((all) => all.length >= 1);
      const arrived = nth(receiving.requests, 0, 'the resend');
      assert.ok(arrived.rawBody.equals(original), arrived.rawBody.toString('utf8'));
      const header = arrived.headers['service-signature'] as string;
      assert.deepEqual(verifySignature({ secret: hook.secret, rawBody: arrived.rawBody, header }), { ok: true });
    });

    it('answers 409 conflict on a disabled subscription unless force is true, and sends a skipped delivery with force', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/off`, { enabled: false });
      await order(await event(owner.id));
      const [skipped] = await deliveries(hook.id);
      assert.equal(skipped.status, 'skipped');

      const path = `/internal/webhooks/${hook.id}/deliveries/${skipped.id}/resend`;
      assertErrorBody(await admin('POST', path, { body: {} }), 409, 'conflict');
      assertErrorBody(await admin('POST', path, { body: { force: 'yes' } }), 400, 'invalid_argument');
      assert.equal((await admin('POST', path, { body: { force: true } })).status, 202);
      await receiving.waitFor((all) => all.length === 1);
      assert.equal(deliveryIdOf(nth(receiving.requests, 0, 'received deliveries')), skipped.id);
      const [sent] = await settled(hook.id);
      assert.equal(sent.status, 'succeeded');
      assert.equal(sent.attemptLog[0].trigger, 'manual');
      assert.equal((await detail(hook.id)).enabled, false, 'a forced resend must not re-enable');
    });

    it('answers 409 conflict to a resend while the subscription has 4 attempts in flight: a resend is held to the cap', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/capped`);
      await order(await event(owner.id));
      const [delivered] = await settled(hook.id);
      // Four attempts in flight (leased, on the subscription's list of leases, as claims write them).
      const leased = ['capped-1', 'capped-2', 'capped-3', 'capped-4'];
      for (const id of leased) {
        await db.query(
          `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, next_attempt_at,
                                         lease_expires_at, lease_token)
           VALUES ($1, $2, 'order.confirmed', $1, convert_to('{}', 'UTF8'), 'pending', now(),
                   now() + interval '1 minute', 'another-instance')`,
          [id, hook.id],
        );
      }
      await db.query(`INSERT INTO webhook_delivery_flight (subscription_id, in_flight) VALUES ($1, $2)`, [
        hook.id,
        leased,
      ]);
      const path = `/internal/webhooks/${hook.id}/deliveries/${delivered.id}/resend`;
      assertErrorBody(await admin('POST', path, { body: {} }), 409, 'conflict');
      assert.equal((await deliveries(hook.id)).find((d) => d.id === delivered.id)?.status, 'succeeded');

      await db.query(`DELETE FROM webhook_delivery WHERE id = ANY ($1)`, [leased]);
      assert.equal((await admin('POST', path, { body: {} })).status, 202);
      await receiving.waitFor((all) => all.filter((request) => deliveryIdOf(request) === delivered.id).length === 2);
    });

    it('answers 404, not 409, for an unknown delivery or another subscription’s on a disabled subscription without force', async () => {
      const owner = await organiser();
      const other = await subscribe(owner.key, 'https://127.0.0.1:1/other');
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/off', { enabled: false });
      await order(await event(owner.id));
      const [othersDelivery] = await deliveries(other.id);
      for (const deliveryId of ['dlv_unknown', othersDelivery.id]) {
        assertErrorBody(
          await admin('POST', `/internal/webhooks/${hook.id}/deliveries/${deliveryId}/resend`, { body: {} }),
          404,
          'not_found',
        );
      }
    });

    it('answers 404 for a delivery of another subscription or an unknown one', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/a`);
      const other = await subscribe(owner.key, `${receiving.origin}/b`);
      await order(await event(owner.id));
      const [delivered] = await settled(hook.id);
      await settled(other.id);
      for (const path of [
        `/internal/webhooks/${other.id}/deliveries/${delivered.id}/resend`,
        `/internal/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/resend`,
        `/internal/webhooks/whk_unknown/deliveries/${delivered.id}/resend`,
      ]) {
        assertErrorBody(await admin('POST', path, { body: {} }), 404, 'not_found');
      }
    });
  });

  it('a subscription disabled by failures misses three events, is re-enabled with recovery and receives exactly those three, in order; warnings at 5, 10, 15, on disable and on recovery', async () => {
    let failing = true;
    const receiving = await receiver(() => (failing ? { status: 500 } : { status: 200 }));
    const owner = await organiser();
    const hook = await subscribe(owner.key, `${receiving.origin}/flaky`);
    const eventId = await event(owner.id);
    const probeOrder = await order(eventId);
    await eventually(
      async () => ((await detail(hook.id)).enabled === false ? true : undefined),
      'the subscription to be disabled after 20 failures',
      30_000,
    );

    const missed = [await order(eventId), await order(eventId), await order(eventId)];
    const log = await deliveries(hook.id);
    assert.deepEqual(
      log.slice(0, 3).map((delivery) => delivery.status),
      ['skipped', 'skipped', 'skipped'],
    );
    await sleep(200);
    const before = receiving.requests.length;
    assert.ok(
      receiving.requests.every((request) => orderIdOf(request) === probeOrder),
      'a missed event was sent',
    );

    failing = false;
    const enabled = await admin('POST', `/internal/webhooks/${hook.id}/enable`, { body: { recover: true } });
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.data.enabled, true);
    assert.equal(enabled.body.data.consecutiveFailures, 0);

    await settled(hook.id, 4);
    await sleep(200);
    // The probe that was still pending goes first (oldest first), then exactly the three missed, in order.
    assert.deepEqual(receiving.requests.slice(before).map(orderIdOf), [probeOrder, ...missed]);

    const shown = await detail(hook.id);
    assert.deepEqual(
      shown.warnings.map((warning: { kind: string; consecutiveFailures: number }) => [
        warning.kind,
        warning.consecutiveFailures,
      ]),
      [
        ['recovered', 0],
        ['disabled', 20],
        ['failing', 15],
        ['failing', 10],
        ['failing', 5],
      ],
    );
    assert.ok(shown.warnings.every((warning: { at: string }) => !Number.isNaN(Date.parse(warning.at))));
    assert.equal(typeof shown.health.lastSuccessAt, 'string');
    assert.equal(typeof shown.health.lastFailureAt, 'string');
    assert.ok(shown.health.successRate > 0 && shown.health.successRate < 1, String(shown.health.successRate));
    assert.equal(typeof shown.health.p50Ms, 'number');
    assert.ok(shown.health.p99Ms >= shown.health.p50Ms);

    // Each warning is also one structured log line operators can alert on, with the last attempt's outcome.
    const logged = logLines
      .filter((line) => line['webhookId'] === hook.id && typeof line['webhookWarning'] === 'string')
      .map((line) => [line['webhookWarning'], line['consecutiveFailures'], line['level'], line['lastOutcome']]);
    assert.deepEqual(logged, [
      ['failing', 5, 40, 'http_5xx'],
      ['failing', 10, 40, 'http_5xx'],
      ['failing', 15, 40, 'http_5xx'],
      ['disabled', 20, 40, 'http_5xx'],
      ['recovered', 0, 40, 'success'],
    ]);
  });

  it('enable with recover sends every delivery skipped while the subscription was off, even one whose publication began before the disabling attempt', async () => {
    let failing = true;
    const receiving = await receiver(() => (failing ? { status: 500 } : { status: 200 }));
    const owner = await organiser();
    const hook = await subscribe(owner.key, `${receiving.origin}/late-read`);
    const eventId = await event(owner.id);
    const pendingOrder = await admin('POST', '/internal/orders', {
      body: { eventId, lineItems: [{ quantity: 1, unitAmountMinor: 900 }], totalAmountMinor: 900 },
    });
    assert.equal(pendingOrder.status, 201, pendingOrder.text);
    const lateOrder = pendingOrder.body.data.id as string;

    // The confirmation's transaction begins, then waits for the order's row (held here) before it reads its
    // recipients: it reads them only after the subscription is disabled, so its delivery is skipped, with a
    // created_at (its transaction's start) older than the disabling attempt.
    const holder = await databaseClient(service.databaseUrl);
    let confirming: Promise<{ status: number; text: string }> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM "order" WHERE id = $1 FOR UPDATE`, [lateOrder]);
      confirming = admin('POST', `/internal/orders/${lateOrder}/confirm`);
      await eventually(async () => {
        const waiting = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%"order"%'`,
        );
        return (waiting.rows[0]?.n ?? 0) > 0 ? true : undefined;
      }, 'the confirmation to wait for the order row');
      // One failure short of disabling: the next attempt, made after the confirmation began, disables it.
      await db.query(`UPDATE webhook_subscription SET consecutive_failures = 19 WHERE id = $1`, [hook.id]);
      const probeOrder = await order(eventId);
      await eventually(
        async () => ((await detail(hook.id)).enabled === false ? true : undefined),
        'the subscription to be disabled by its 20th failure',
      );
      assert.ok(receiving.requests.every((request) => orderIdOf(request) === probeOrder));
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    assert.equal((await confirming)?.status, 200);

    const raced = await db.query<{ id: string; status: string; before_disable: boolean }>(
      `SELECT h.id, h.status, h.created_at < s.disabled_at AS before_disable
         FROM webhook_delivery_history h JOIN webhook_subscription s ON s.id = h.subscription_id
        WHERE h.subscription_id = $1 AND h.subject_id = $2`,
      [hook.id, lateOrder],
    );
    assert.deepEqual(
      raced.rows.map((row) => [row.status, row.before_disable]),
      [['skipped', true]],
      'the skipped delivery is older than the disable',
    );

    failing = false;
    const enabled = await admin('POST', `/internal/webhooks/${hook.id}/enable`, { body: { recover: true } });
    assert.equal(enabled.status, 200, enabled.text);
    await receiving.waitFor((all) => all.some((request) => orderIdOf(request) === lateOrder));
    const [late] = (await deliveries(hook.id)).filter((delivery) => delivery.id === raced.rows[0]?.id);
    assert.notEqual(late?.status, 'skipped');
  });

  describe('delivery log', () => {
    it('lists 500 at a time in {data} and names the next 500 in a Link rel="next" header, until every delivery has been listed once', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/paged-log');
      await insertFailedHistoryDeliveries(db, hook.id, 'dlv_log_', 1001);
      const seen: string[] = [];
      const sizes: number[] = [];
      let path: string | undefined = `/internal/webhooks/${hook.id}/deliveries`;
      while (path !== undefined) {
        const page = await admin('GET', path);
        assert.equal(page.status, 200, page.text);
        assert.deepEqual(Object.keys(page.body), ['data'], 'the body stays {data: [...]}');
        sizes.push(page.body.data.length);
        seen.push(...page.body.data.map((delivery: { id: string }) => delivery.id));
        path = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
      }
      assert.deepEqual(sizes, [500, 500, 1]);
      assert.equal(new Set(seen).size, 1001, 'no delivery is listed twice');
      assert.deepEqual([seen[0], seen.at(-1)], ['dlv_log_1001', 'dlv_log_0001']);
      assertErrorBody(
        await admin('GET', `/internal/webhooks/${hook.id}/deliveries?cursor=${encodeURIComponent('bad cursor')}`),
        400,
        'invalid_argument',
      );
    });

    it('refuses a cursor that names no delivery of the subscription with 400, instead of an empty page that reads as the end', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/cursor-check');
      const other = await subscribe(owner.key, 'https://127.0.0.1:1/cursor-other');
      await insertFailedHistoryDeliveries(db, hook.id, 'dlv_cur_', 3);
      await insertFailedHistoryDeliveries(db, other.id, 'dlv_oth_', 1);
      for (const cursor of ['garbage', 'dlv_oth_0001']) {
        const page = await admin('GET', `/internal/webhooks/${hook.id}/deliveries?cursor=${cursor}`);
        assertErrorBody(page, 400, 'invalid_argument');
      }
      const last = await admin('GET', `/internal/webhooks/${hook.id}/deliveries?cursor=dlv_cur_0001`);
      assert.equal(last.status, 200, 'the oldest delivery names a page that is empty, and that is the end');
      assert.deepEqual(last.body.data, []);
    });
  });

  describe('recover', () => {
    it('queues again, oldest first, what did not succeed in [since, until), and answers {queued, remaining}', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/again`);
      const eventId = await event(owner.id);
      const start = new Date(Date.now() - 1_000).toISOString();
      for (let i = 0; i < 3; i += 1) await order(eventId);
      const delivered = await settled(hook.id, 3);
      const [newest, middle, oldest] = delivered.map((delivery) => delivery.id as string);
      assert.ok(newest && middle && oldest, 'three deliveries settled');
      await db.query(`UPDATE webhook_delivery_history SET status = 'failed' WHERE id = ANY ($1)`, [[oldest, newest]]);
      const sent = receiving.requests.length;

      const empty = await admin('POST', `/internal/webhooks/${hook.id}/recover`, {
        body: { since: start, until: start },
      });
      assert.equal(empty.status, 202, empty.text);
      assert.deepEqual(empty.body.data, { queued: 0, remaining: 0 });

      const recovered = await admin('POST', `/internal/webhooks/${hook.id}/recover`, { body: { since: start } });
      assert.equal(recovered.status, 202, recovered.text);
      assert.deepEqual(recovered.body.data, { queued: 2, remaining: 0 });
      await receiving.waitFor((all) => all.length >= sent + 2);
      await settled(hook.id, 3);
      assert.deepEqual(receiving.requests.slice(sent).map(deliveryIdOf), [oldest, newest]);
      assert.ok(!receiving.requests.slice(sent).map(deliveryIdOf).includes(middle));
    });

    it('queues at most 10,000 per call and says how many remain', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/bulk`);
      await db.query(
        `INSERT INTO webhook_delivery_history (id, subscription_id, event_type, subject_id, payload, status, completed_at)
         SELECT gen_random_uuid()::text, $1, 'order.confirmed', 'ord_bulk_' || g, convert_to('{}', 'UTF8'),
                'failed', now()
           FROM generate_series(1, 10003) g`,
        [hook.id],
      );
      const recovered = await admin('POST', `/internal/webhooks/${hook.id}/recover`, {
        body: { since: Date.now() - 60_000 },
      });
      assert.equal(recovered.status, 202, recovered.text);
      assert.deepEqual(recovered.body.data, { queued: 10_000, remaining: 3 });
      // Deleting drops what waits, so the rest of the run is not spent sending these.
      assert.equal((await api('DELETE', `/v1/webhooks/${hook.id}`, { key: owner.key })).status, 200);
    });

    it('answers 400 for a missing or unreadable since or an until before since, 409 when disabled, 404 when unknown', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/never');
      const off = await subscribe(owner.key, 'https://127.0.0.1:1/off', { enabled: false });
      const recover = (id: string, body: unknown) => admin('POST', `/internal/webhooks/${id}/recover`, { body });
      for (const body of [
        {},
        { since: 'yesterday' },
        { since: '2026-13-01T00:00:00Z' },
        { since: true },
        { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
        { since: '2026-01-01T00:00:00Z', until: 'later' },
        { since: 8640000000000000 },
      ]) {
        assertErrorBody(await recover(hook.id, body), 400, 'invalid_argument');
      }
      assertErrorBody(await recover(off.id, { since: '2026-01-01T00:00:00Z' }), 409, 'conflict');
      assertErrorBody(await recover('whk_unknown', { since: '2026-01-01T00:00:00Z' }), 404, 'not_found');
    });
  });

  describe('secret rotation', () => {
    it('signs with the new and the old secret during the grace period, newest first, so receivers holding either verify', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/rotating`);
      const rotated = await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, {
        body: { graceSeconds: 3600 },
      });
      assert.equal(rotated.status, 200, rotated.text);
      const fresh = rotated.body.data.secret as string;
      assert.match(fresh, /^whsec_[0-9a-f]{64}$/);
      assert.notEqual(fresh, hook.secret);
      const expires = Date.parse(rotated.body.data.secretRotation.previousExpiresAt);
      assert.ok(Math.abs(expires - (Date.now() + 3_600_000)) < 60_000);
      const listed = await api('GET', '/v1/webhooks', { key: owner.key });
      assert.equal(listed.body.data.find((w: { id: string }) => w.id === hook.id).secret, fresh);

      await order(await event(owner.id));
      const request = nth(await receiving.waitFor((all) => all.length >= 1), 0, 'received deliveries');
      const header = request.headers['service-signature'] as string;
      assert.equal(header.match(/v1=/g)?.length, 2);
      const headers = request.headers as Record<string, string>;
      for (const secret of [fresh, hook.secret]) {
        assert.deepEqual(verifySignature({ secret, rawBody: request.rawBody, header }), { ok: true });
        assert.doesNotThrow(() => new Webhook(secret).verify(request.rawBody.toString('utf8'), headers));
      }
      // The newest secret signs first in both schemes: the first signature alone verifies with it, not with the old.
      const [timestamp = '', firstV1 = ''] = header.split(',');
      assert.equal(timestamp, `t=${headers['webhook-timestamp']}`);
      const firstOnly = `${timestamp},${firstV1}`;
      assert.deepEqual(verifySignature({ secret: fresh, rawBody: request.rawBody, header: firstOnly }), { ok: true });
      assert.equal(verifySignature({ secret: hook.secret, rawBody: request.rawBody, header: firstOnly }).ok, false);
      const standard = (headers['webhook-signature'] ?? '').split(' ');
      assert.equal(standard.length, 2);
      const firstStandard = { ...headers, 'webhook-signature': standard[0] ?? '' };
      assert.doesNotThrow(() => new Webhook(fresh).verify(request.rawBody.toString('utf8'), firstStandard));
      assert.throws(() => new Webhook(hook.secret).verify(request.rawBody.toString('utf8'), firstStandard));
    });

    it('gives the old secret a day of grace by default: previousExpiresAt is the rotation time plus 86,400 s', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/rotated-by-default');
      const rotatedFrom = Date.now();
      const rotated = await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: {} });
      const rotatedBy = Date.now();
      assert.equal(rotated.status, 200, rotated.text);
      const expires = Date.parse(rotated.body.data.secretRotation?.previousExpiresAt);
      assert.ok(
        expires >= rotatedFrom + 86_400_000 - 2_000 && expires <= rotatedBy + 86_400_000 + 2_000,
        `the old secret's grace ends at ${rotated.body.data.secretRotation?.previousExpiresAt}, not a day after the rotation`,
      );
      assert.equal(
        (await detail(hook.id)).secretRotation.previousExpiresAt,
        rotated.body.data.secretRotation.previousExpiresAt,
      );
    });

    it('keeps at most two secrets signing: a rotation during a grace period ends the older grace at once', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/twice`);
      const rotate = (graceSeconds?: number) =>
        admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, {
          body: graceSeconds === undefined ? {} : { graceSeconds },
        });
      const second = (await rotate()).body.data;
      assert.ok(second.secretRotation !== null, 'the default grace is a day');
      const third = (await rotate(600)).body.data;
      await order(await event(owner.id));
      const request = nth(await receiving.waitFor((all) => all.length >= 1), 0, 'received deliveries');
      const header = request.headers['service-signature'] as string;
      const verify = (secret: string) => verifySignature({ secret, rawBody: request.rawBody, header }).ok;
      assert.deepEqual([verify(third.secret), verify(second.secret), verify(hook.secret)], [true, true, false]);

      const last = (await rotate(0)).body.data;
      assert.equal(last.secretRotation, null);
      assert.equal((await detail(hook.id)).secretRotation, null);
    });

    it('answers each of several concurrent rotations with the secret it made, never another rotation’s', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/rotated-at-once');
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: { graceSeconds: 60 } }),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        answers.map(() => 200),
      );
      const secrets = answers.map((answer) => answer.body.data.secret as string);
      assert.equal(new Set(secrets).size, secrets.length, 'every rotation shows its own new secret');
    });

    it('refuses graceSeconds: null with 400 (an integer or nothing; null is not the default), as portal links refuse ttlSeconds: null', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/grace-null');
      assertErrorBody(
        await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: { graceSeconds: null } }),
        400,
        'invalid_argument',
      );
      assert.equal((await detail(hook.id)).secretRotation, null, 'nothing was rotated');
    });

    it('answers 400 for a graceSeconds that is not a whole number from 0 to 604800, and 404 for an unknown webhook', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/grace');
      for (const graceSeconds of [-1, 604_801, 1.5, '60', true]) {
        assertErrorBody(
          await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: { graceSeconds } }),
          400,
          'invalid_argument',
        );
      }
      assert.equal(
        (await admin('POST', `/internal/webhooks/${hook.id}/rotate-secret`, { body: { graceSeconds: 604_800 } }))
          .status,
        200,
      );
      assertErrorBody(
        await admin('POST', '/internal/webhooks/whk_unknown/rotate-secret', { body: {} }),
        404,
        'not_found',
      );
    });
  });

  describe('delivery headers', () => {
    it("verifies real deliveries with the standardwebhooks library and with Stripe's constructEvent", async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/verify`);
      await order(await event(owner.id));
      const request = nth(await receiving.waitFor((all) => all.length >= 1), 0, 'received deliveries');
      const headers = request.headers as Record<string, string>;
      assert.equal(headers['webhook-id'], deliveryIdOf(request));
      const signature = defined(headers['service-signature'], 'a Service-Signature header');
      assert.match(headers['webhook-timestamp'] ?? '', /^\d+$/);
      assert.ok(signature.startsWith(`t=${headers['webhook-timestamp']},`));
      assert.match(headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]+=*$/);

      const viaStandard = new Webhook(hook.secret).verify(request.rawBody.toString('utf8'), headers);
      assert.deepEqual(viaStandard, request.body);
      const viaStripe = stripeSdk().webhooks.constructEvent(request.rawBody, signature, hook.secret);
      assert.deepEqual(viaStripe, request.body);
    });

    it('carries the trace id of the request that caused the delivery in traceparent on every attempt, and logs it', async () => {
      let answers = 0;
      const receiving = await receiver(() => (answers++ === 0 ? { status: 503 } : { status: 204 }));
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/traced`);
      const eventId = await event(owner.id);
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      await order(eventId, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
      await receiving.waitFor((all) => all.length >= 2);
      const parents = receiving.requests.map((request) => String(request.headers['traceparent']));
      for (const parent of parents) assert.match(parent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      assert.notEqual(parents[0], parents[1], 'each attempt is its own span');
      const [delivery] = await settled(hook.id);
      assert.equal(delivery.traceId, traceId);

      // Without a traceparent, the request starts a trace of its own.
      await order(eventId);
      const [latest] = await settled(hook.id, 2);
      assert.match(latest.traceId, TRACE_ID);
      assert.notEqual(latest.traceId, traceId);
      const last = receiving.requests.at(-1) as ReceivedRequest;
      assert.equal(String(last.headers['traceparent']).split('-')[1], latest.traceId);
    });
  });

  describe('detail', () => {
    it('shows the Webhook with its account, creation time, rotation state, health and warnings', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/detail', { enabled: false });
      const shown = await detail(hook.id);
      assert.deepEqual(Object.keys(shown), [
        'id',
        'url',
        'events',
        'secret',
        'enabled',
        'description',
        'lastStatus',
        'consecutiveFailures',
        'secretRotation',
        'accountType',
        'accountId',
        'createdAt',
        'health',
        'warnings',
      ]);
      assert.equal(shown.secret, hook.secret);
      assert.equal(shown.accountType, 'organiser');
      assert.equal(shown.accountId, owner.id);
      assert.equal(shown.secretRotation, null);
      assert.deepEqual(shown.health, {
        lastSuccessAt: null,
        lastFailureAt: null,
        successRate: null,
        p50Ms: null,
        p99Ms: null,
      });
      assert.deepEqual(shown.warnings, []);
    });

    it('writes a routine success to the subscription row at most once every ten seconds, and health.lastSuccessAt is still the latest success', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/in`);
      const eventId = await event(owner.id);
      // Three deliveries one after another, well within ten seconds of each other.
      for (let sent = 1; sent <= 3; sent += 1) {
        await order(eventId);
        await settled(hook.id, sent);
      }
      const attempts = await db.query<{ at: Date }>(
        `SELECT a.attempted_at AS at FROM webhook_delivery_attempt a JOIN webhook_delivery_all d ON d.id = a.delivery_id
          WHERE d.subscription_id = $1 ORDER BY a.attempted_at`,
        [hook.id],
      );
      const times = attempts.rows.map((row) => row.at.getTime());
      assert.equal(times.length, 3);
      const first = defined(times[0], 'the first attempt');
      const latest = defined(times[2], 'the third attempt');
      const stored = await db.query<{ last_success_at: Date; last_status: string }>(
        `SELECT last_success_at, last_status FROM webhook_subscription WHERE id = $1`,
        [hook.id],
      );
      // The first success wrote the row (lastStatus changed); the two after it changed nothing but the time.
      const row = nth(stored.rows, 0, 'the subscription row');
      assert.equal(row.last_success_at.getTime(), first);
      assert.equal(row.last_status, '200');
      assert.ok(latest > first, 'the three attempts were made at distinct times');

      const shown = await detail(hook.id);
      assert.equal(shown.lastStatus, 200);
      assert.equal(shown.health.lastSuccessAt, new Date(latest).toISOString());
    });

    it('answers 404 not_found for an unknown or deleted webhook', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/gone');
      assert.equal((await api('DELETE', `/v1/webhooks/${hook.id}`, { key: owner.key })).status, 200);
      assertErrorBody(await admin('GET', `/internal/webhooks/${hook.id}`), 404, 'not_found');
      assertErrorBody(await admin('GET', '/internal/webhooks/whk_unknown'), 404, 'not_found');
      assertErrorBody(await admin('POST', `/internal/webhooks/${hook.id}/enable`, { body: {} }), 404, 'not_found');
    });
  });

  describe('retention', () => {
    it('ends as dropped a delivery in flight when its subscription was deleted and given back without a record, so the subscription is purged', async () => {
      const owner = await organiser();
      const hook = await subscribe(owner.key, 'https://127.0.0.1:1/deleted-in-flight');
      // In flight on an instance that is stopping: leased, its attempt not yet recorded.
      await db.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, next_attempt_at,
                                       lease_expires_at, lease_token)
         VALUES ('in-flight-1', $1, 'order.confirmed', 'ord_in_flight', convert_to('{}', 'UTF8'), 'pending', now(),
                 now() + interval '1 minute', 'stopping-instance')`,
        [hook.id],
      );
      assert.equal((await api('DELETE', `/v1/webhooks/${hook.id}`, { key: owner.key })).status, 200);
      const statusOf = async (): Promise<string[]> =>
        (
          await db.query<{ status: string }>(`SELECT status FROM webhook_delivery_all WHERE id = 'in-flight-1'`)
        ).rows.map((row) => row.status);
      assert.deepEqual(await statusOf(), ['pending'], 'the deletion lets an attempt in flight finish');
      // The instance stops before the attempt ends: its shutdown gives the lease back, unrecorded.
      await service.running.app
        .get(DeliveryClaimRepository)
        .releaseLeases([{ id: 'in-flight-1', leaseToken: 'stopping-instance' }]);

      await service.running.app.get(WebhookRetentionService).purge();
      assert.deepEqual(await statusOf(), ['dropped']);
      await db.query(`UPDATE webhook_subscription SET deleted_at = now() - interval '31 days' WHERE id = $1`, [
        hook.id,
      ]);
      await service.running.app.get(WebhookRetentionService).purge();
      const left = await db.query(`SELECT 1 FROM webhook_subscription WHERE id = $1`, [hook.id]);
      assert.equal(left.rowCount, 0, 'the deleted subscription is purged once nothing of it waits');
    });

    it('purges only final deliveries past WEBHOOK_RETENTION_DAYS, and deleted subscriptions with nothing pending', async () => {
      const receiving = await receiver();
      const owner = await organiser();
      const hook = await subscribe(owner.key, `${receiving.origin}/kept`);
      const eventId = await event(owner.id);
      for (let i = 0; i < 3; i += 1) await order(eventId);
      const [recent, aged, agedToo] = (await settled(hook.id, 3)).map((delivery) => delivery.id as string);
      // Aged as if finished (and attempted) that long ago: their days' partitions are made as they were then.
      for (const daysAgo of [31, 29]) await ensureHistoryDay(db, daysAgo);
      await db.query(
        `UPDATE webhook_delivery_history SET completed_at = now() - interval '31 days' WHERE id = ANY ($1)`,
        [[aged, agedToo]],
      );
      await db.query(
        `UPDATE webhook_delivery_attempt SET attempted_at = now() - interval '31 days' WHERE delivery_id = ANY ($1)`,
        [[aged, agedToo]],
      );
      await db.query(`UPDATE webhook_delivery_history SET completed_at = now() - interval '29 days' WHERE id = $1`, [
        recent,
      ]);
      // An old delivery still pending (due far in the future) is never purged.
      await db.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, next_attempt_at, created_at)
         VALUES ('old-pending-1', $1, 'order.confirmed', 'ord_old', convert_to('{}', 'UTF8'), 'pending',
                 now() + interval '1 day', now() - interval '90 days')`,
        [hook.id],
      );
      const gone = await subscribe(owner.key, 'https://127.0.0.1:1/gone-for-good');
      const waiting = await subscribe(owner.key, 'https://127.0.0.1:1/still-waiting');
      for (const id of [gone.id, waiting.id]) {
        assert.equal((await api('DELETE', `/v1/webhooks/${id}`, { key: owner.key })).status, 200);
      }
      await db.query(`UPDATE webhook_subscription SET deleted_at = now() - interval '31 days' WHERE id = ANY ($1)`, [
        [gone.id, waiting.id],
      ]);
      await db.query(
        `INSERT INTO webhook_delivery (id, subscription_id, event_type, subject_id, payload, status, next_attempt_at)
         VALUES ('old-pending-2', $1, 'order.confirmed', 'ord_wait', convert_to('{}', 'UTF8'), 'pending', now() + interval '1 day')`,
        [waiting.id],
      );

      const counts = await service.running.app.get(WebhookRetentionService).purge();
      assert.ok(counts.deliveries >= 2 && counts.subscriptions >= 1, JSON.stringify(counts));

      const left = await db.query<{ id: string }>(`SELECT id FROM webhook_delivery_all WHERE subscription_id = $1`, [
        hook.id,
      ]);
      assert.deepEqual(left.rows.map((row) => row.id).sort(), ['old-pending-1', recent].sort());
      const attempts = await db.query(`SELECT 1 FROM webhook_delivery_attempt WHERE delivery_id = ANY ($1)`, [
        [aged, agedToo],
      ]);
      assert.equal(attempts.rowCount, 0);
      const subscriptions = await db.query<{ id: string }>(`SELECT id FROM webhook_subscription WHERE id = ANY ($1)`, [
        [gone.id, waiting.id, hook.id],
      ]);
      assert.deepEqual(subscriptions.rows.map((row) => row.id).sort(), [hook.id, waiting.id].sort());
    });
  });
});
