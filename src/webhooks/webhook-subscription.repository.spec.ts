import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { insertDelivery, insertSubscription, webhookTables } from '../../test/support/webhook-rows';
import type { WebhookTables } from '../../test/support/webhook-rows';
import type { Principal } from '../common/auth-context/access';
import { WebhookSubscriptionEntity } from './entities/webhook-subscription.entity';
import { WebhookSubscriptionRepository } from './webhook-subscription.repository';
import type { Transaction } from '../database/unit-of-work';

const ORGANISER_A: Principal = { type: 'organiser', id: 'org_a' };
const ORGANISER_B: Principal = { type: 'organiser', id: 'org_b' };

/** Subscriptions on real PostgreSQL: every statement of WebhookSubscriptionRepository. */
describe('WebhookSubscriptionRepository', () => {
  let tables: WebhookTables;
  let subscriptions: WebhookSubscriptionRepository;

  before(async () => {
    tables = await webhookTables();
    subscriptions = new WebhookSubscriptionRepository(
      tables.dataSource.getRepository(WebhookSubscriptionEntity),
      tables.database,
    );
  });
  after(async () => tables.dataSource.destroy());
  beforeEach(async () => {
    await tables.dataSource.query('TRUNCATE webhook_subscription, webhook_delivery, webhook_warning CASCADE');
  });

  const idsOf = (rows: Array<{ subscriptionId: string } | { id: string }>): string[] =>
    rows.map((row) => ('subscriptionId' in row ? row.subscriptionId : row.id));

  it('lists and counts only the account’s own live subscriptions: another account’s are never returned', async () => {
    const mine = await insertSubscription(tables.dataSource, { principalId: 'org_a' });
    await insertSubscription(tables.dataSource, { principalId: 'org_a', deleted: true });
    await insertSubscription(tables.dataSource, { principalId: 'org_b' });
    await insertSubscription(tables.dataSource, { principalType: 'venue', principalId: 'org_a' });
    assert.deepEqual(idsOf(await subscriptions.listForAccount(ORGANISER_A)), [mine]);
    assert.equal(await tables.unitOfWork.run((tx) => subscriptions.countForAccount(ORGANISER_A, tx)), 1);
  });

  it('deletes only the account’s own live subscription: another account’s is left as it was', async () => {
    const theirs = await insertSubscription(tables.dataSource, { principalId: 'org_b' });
    assert.equal(await tables.unitOfWork.run((tx) => subscriptions.softDelete(ORGANISER_A, theirs, tx)), false);
    assert.notEqual(await subscriptions.findLive(theirs), null);
    assert.equal(await tables.unitOfWork.run((tx) => subscriptions.softDelete(ORGANISER_B, theirs, tx)), true);
    assert.equal(await subscriptions.findLive(theirs), null);
    assert.equal((await subscriptions.findById(theirs))?.enabled, false, 'a deleted row stays, disabled');
    assert.equal(await tables.unitOfWork.run((tx) => subscriptions.softDelete(ORGANISER_B, theirs, tx)), false);
  });

  /** A subscription of organiser A as the service inserts one. */
  const newRow = (id: string, enabled: boolean): WebhookSubscriptionEntity =>
    Object.assign(new WebhookSubscriptionEntity(), {
      id,
      principalType: 'organiser',
      principalId: 'org_a',
      url: 'https://receiver.example/hook',
      events: ['order.confirmed'],
      secretSealed: 'sealed',
      enabled,
      disabledAt: enabled ? null : new Date(),
      description: null,
      lastStatus: null,
      consecutiveFailures: 0,
    });

  it('inserts in the caller’s transaction, under the account’s lock', async () => {
    const row = newRow('whk_inserted', true);
    await tables.unitOfWork.run(async (tx) => {
      await subscriptions.lockAccount(ORGANISER_A, tx);
      await subscriptions.insert(row, tx);
    });
    assert.deepEqual(idsOf(await subscriptions.listForAccount(ORGANISER_A)), ['whk_inserted']);
  });

  it('finds order.confirmed recipients: the organiser’s live subscriptions asking for it, disabled ones marked', async () => {
    // Recipients come in creation order, ties (two rows in one millisecond) by id: ids in creation order keep it fixed.
    const on = await insertSubscription(tables.dataSource, { id: 'whk_1_on', principalId: 'org_a' });
    const off = await insertSubscription(tables.dataSource, { id: 'whk_2_off', principalId: 'org_a', enabled: false });
    await insertSubscription(tables.dataSource, { principalId: 'org_a', events: ['event.published'] });
    await insertSubscription(tables.dataSource, { principalId: 'org_a', deleted: true });
    await insertSubscription(tables.dataSource, { principalId: 'org_b' });
    await insertSubscription(tables.dataSource, { principalType: 'venue', principalId: 'org_a' });
    const recipients = await tables.unitOfWork.run((tx) => subscriptions.findOrderConfirmedRecipients('org_a', tx));
    assert.deepEqual(
      recipients.map((r) => [r.subscriptionId, r.principal, r.enabled]),
      [
        [on, { type: 'organiser', id: 'org_a' }, true],
        [off, { type: 'organiser', id: 'org_a' }, false],
      ],
    );
  });

  it('finds event.published recipients: the organiser’s and those of the venues named, nobody else’s', async () => {
    const organiser = await insertSubscription(tables.dataSource, { id: 'whk_1_organiser', principalId: 'org_a' });
    const venue = await insertSubscription(tables.dataSource, {
      id: 'whk_2_venue',
      principalType: 'venue',
      principalId: 'ven_1',
    });
    await insertSubscription(tables.dataSource, { principalType: 'venue', principalId: 'ven_2' });
    await insertSubscription(tables.dataSource, { principalId: 'org_b' });
    await insertSubscription(tables.dataSource, { principalId: 'org_a', events: ['order.confirmed'] });
    const found = await tables.unitOfWork.run((tx) =>
      subscriptions.findEventPublishedRecipients('org_a', ['ven_1'], tx),
    );
    assert.deepEqual(idsOf(found), [organiser, venue]);
    const noOrganiser = await tables.unitOfWork.run((tx) =>
      subscriptions.findEventPublishedRecipients(null, ['ven_1'], tx),
    );
    assert.deepEqual(idsOf(noOrganiser), [venue]);
  });

  it('marks a subscription inserted disabled in the queue numbering, so its enable recovers by number what it skipped', async () => {
    const row = newRow('whk_created_off', false);
    const before = (await tables.dataSource.query(`SELECT nextval('webhook_delivery_seq')::text AS seq`))[0].seq;
    await tables.unitOfWork.run((tx) => subscriptions.insert(row, tx));
    const enabled = await tables.unitOfWork.run((tx) => subscriptions.enable('whk_created_off', tx));
    assert.ok(enabled?.skippedAfterSeq !== null && enabled?.skippedAfterSeq !== undefined, 'a mark was drawn');
    assert.ok(BigInt(enabled.skippedAfterSeq) > BigInt(before), 'drawn at the insert, after every earlier number');
  });

  it('enables a disabled subscription and says since when it was off; a deleted one is not found', async () => {
    const off = await insertSubscription(tables.dataSource, { enabled: false, consecutiveFailures: 20 });
    await tables.dataSource.query(
      `UPDATE webhook_subscription SET disabled_at = '2030-01-02T03:04:05Z' WHERE id = $1`,
      [off],
    );
    const enabled = await tables.unitOfWork.run((tx) => subscriptions.enable(off, tx));
    assert.equal(enabled?.disabledSince?.toISOString(), '2030-01-02T03:04:05.000Z');
    const row = await subscriptions.findLive(off);
    assert.deepEqual([row?.enabled, row?.consecutiveFailures, row?.disabledAt], [true, 0, null]);
    assert.deepEqual(await tables.unitOfWork.run((tx) => subscriptions.enable(off, tx)), {
      disabledSince: null,
      skippedAfterSeq: null,
    });
    const gone = await insertSubscription(tables.dataSource, { deleted: true });
    assert.equal(await tables.unitOfWork.run((tx) => subscriptions.enable(gone, tx)), null);
  });

  it('rotates a secret: the old one signs during the grace period, none with no grace, a deleted one is not found', async () => {
    const id = await insertSubscription(tables.dataSource);
    const rotate = (subscriptionId: string, newSecretSealed: string, graceSeconds: number) =>
      tables.unitOfWork.run((tx) =>
        subscriptions.rotateSecret(subscriptionId, { newSecretSealed, graceSeconds, mayEndGrace: true }, tx),
      );
    const rotated = rotatedRow(await rotate(id, 'sealed-2', 60));
    assert.equal(rotated.secretSealed, 'sealed-2');
    assert.equal(rotated.previousSecretSealed, 'sealed');
    assert.ok((rotated.previousSecretExpiresAt?.getTime() ?? 0) > Date.now() + 50_000);
    const again = rotatedRow(await rotate(id, 'sealed-3', 0));
    assert.deepEqual(
      [again.secretSealed, again.previousSecretSealed, again.previousSecretExpiresAt],
      ['sealed-3', null, null],
    );
    const gone = await insertSubscription(tables.dataSource, { deleted: true });
    assert.equal(await rotate(gone, 'sealed-4', 60), null);
  });

  it('refuses a rotation asked to keep an earlier grace while it runs, also the second of two at once, and changes nothing', async () => {
    const id = await insertSubscription(tables.dataSource);
    const rotate = (newSecretSealed: string) =>
      tables.unitOfWork.run((tx) =>
        subscriptions.rotateSecret(id, { newSecretSealed, graceSeconds: 60, mayEndGrace: false }, tx),
      );
    // No grace runs before: each would rotate alone. Together, the second waits for the first's row lock and then
    // finds the grace it began.
    const outcomes = await Promise.all([rotate('sealed-a'), rotate('sealed-b')]);
    const refused = outcomes.filter((outcome) => outcome !== null && 'graceRunsUntil' in outcome);
    const rotated = outcomes.filter((outcome) => outcome !== null && 'rotated' in outcome);
    assert.deepEqual([rotated.length, refused.length], [1, 1], JSON.stringify(outcomes));
    const row = await subscriptions.findLive(id);
    assert.equal(row?.previousSecretSealed, 'sealed', 'the original secret still signs through its grace');
    assert.deepEqual(refused[0], { graceRunsUntil: row?.previousSecretExpiresAt });
  });

  it('keeps the health of a disabled subscription: the attempts that disabled it count, past the skipped deliveries made since', async () => {
    const id = await insertSubscription(tables.dataSource);
    const failed = await insertDelivery(tables.dataSource, { subscriptionId: id, status: 'failed' });
    await tables.dataSource.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, triggered_by)
       VALUES ($1, now(), '500', 40, 'scheduled'), ($1, now(), '500', 60, 'scheduled')`,
      [failed],
    );
    for (let skipped = 0; skipped < 150; skipped += 1) {
      await insertDelivery(tables.dataSource, { subscriptionId: id, status: 'skipped' });
    }
    assert.deepEqual(await subscriptions.recentAttemptFigures(id, 100), {
      attempts: 2,
      successes: 0,
      p50Ms: 40,
      p99Ms: 60,
      lastSuccessAt: null,
    });
  });

  it('reads health over the newest attempts behind a backlog: the delivery tried at the head of the queue and the last finished count, past newer ones not tried yet', async () => {
    const id = await insertSubscription(tables.dataSource);
    const finished = await insertDelivery(tables.dataSource, { subscriptionId: id, status: 'succeeded' });
    const probed = await insertDelivery(tables.dataSource, { subscriptionId: id });
    for (let waiting = 0; waiting < 150; waiting += 1) {
      await insertDelivery(tables.dataSource, { subscriptionId: id });
    }
    // As the attempt records leave them: the finished delivery's success, then the head's failing probe.
    await tables.dataSource.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, triggered_by)
       VALUES ($1, now() - interval '2 seconds', '200', 20, 'scheduled'), ($2, now(), '500', 80, 'scheduled')`,
      [finished, probed],
    );
    await tables.dataSource.query(`UPDATE webhook_delivery SET attempts = 1, last_status = '500' WHERE id = $1`, [
      probed,
    ]);
    const figures = await subscriptions.recentAttemptFigures(id, 100);
    assert.equal(figures.attempts, 2);
    assert.equal(figures.successes, 1);
    assert.equal(figures.p50Ms, 20);
    assert.equal(figures.p99Ms, 80);
    assert.ok(figures.lastSuccessAt !== null, 'the newest success is found past the backlog');
  });

  it('pages stored secrets by id, deleted subscriptions too, and replaces them only if unchanged since read', async () => {
    const a = await insertSubscription(tables.dataSource, { id: 'whk_a' });
    await insertSubscription(tables.dataSource, { id: 'whk_b', deleted: true });
    await insertSubscription(tables.dataSource, { id: 'whk_c' });
    assert.deepEqual(idsOf(await subscriptions.sealedSecretsAfter('', 2)), ['whk_a', 'whk_b']);
    assert.deepEqual(idsOf(await subscriptions.sealedSecretsAfter('whk_b', 2)), ['whk_c']);
    const [stored] = await subscriptions.sealedSecretsAfter('', 1);
    assert.ok(stored);
    const resealed = { id: a, secretSealed: 'resealed', previousSecretSealed: null };
    const rotation = { newSecretSealed: 'rotated meanwhile', graceSeconds: 60, mayEndGrace: true };
    await tables.unitOfWork.run((tx) => subscriptions.rotateSecret(a, rotation, tx));
    assert.equal(await subscriptions.replaceSealedSecrets(stored, resealed), false, 'a rotation in between wins');
    const [current] = await subscriptions.sealedSecretsAfter('', 1);
    assert.ok(current);
    assert.equal(await subscriptions.replaceSealedSecrets(current, resealed), true);
    assert.equal((await subscriptions.findById(a))?.secretSealed, 'resealed');
  });

  it('reads warnings newest first, and health over the attempts of the newest deliveries', async () => {
    const id = await insertSubscription(tables.dataSource);
    await tables.dataSource.query(
      `INSERT INTO webhook_warning (subscription_id, at, kind, consecutive_failures)
       VALUES ($1, now() - interval '1 hour', 'failing', 5), ($1, now(), 'recovered', 0)`,
      [id],
    );
    assert.deepEqual(
      (await subscriptions.warnings(id, 10)).map((w) => [w.kind, w.consecutiveFailures]),
      [
        ['recovered', 0],
        ['failing', 5],
      ],
    );
    assert.equal((await subscriptions.warnings(id, 1)).length, 1);

    assert.deepEqual(await subscriptions.recentAttemptFigures(id, 100), {
      attempts: 0,
      successes: 0,
      p50Ms: null,
      p99Ms: null,
      lastSuccessAt: null,
    });
    const old = await insertDelivery(tables.dataSource, { subscriptionId: id, status: 'failed' });
    const recent = await insertDelivery(tables.dataSource, { subscriptionId: id, status: 'succeeded' });
    // The attempt log is partitioned by day: the far-future attempt's day needs its partition.
    await tables.dataSource.query(`SELECT webhook_history_ensure_partitions('2030-01-01', '2030-01-01')`);
    await tables.dataSource.query(
      `INSERT INTO webhook_delivery_attempt (delivery_id, attempted_at, outcome, duration_ms, triggered_by)
       VALUES ($1, now(), '500', 900, 'scheduled'), ($2, now(), '503', 30, 'scheduled'),
              ($2, '2030-01-01T00:00:00Z', '200', 10, 'scheduled')`,
      [old, recent],
    );
    const figures = await subscriptions.recentAttemptFigures(id, 2);
    assert.deepEqual(figures, {
      attempts: 2,
      successes: 1,
      p50Ms: 10,
      p99Ms: 30,
      lastSuccessAt: new Date('2030-01-01T00:00:00Z'),
    });
  });

  it('purges subscriptions deleted before the retention period once nothing of theirs is pending, and old warnings', async () => {
    const purgeable = await insertSubscription(tables.dataSource, { deletedDaysAgo: 40 });
    const stillSending = await insertSubscription(tables.dataSource, { deletedDaysAgo: 40 });
    await insertDelivery(tables.dataSource, { subscriptionId: stillSending, leasedBy: 'worker' });
    const recentlyDeleted = await insertSubscription(tables.dataSource, { deletedDaysAgo: 10 });
    assert.equal(await subscriptions.purgeDeleted(30, 10), 1);
    assert.equal(await subscriptions.findById(purgeable), null);
    assert.notEqual(await subscriptions.findById(stillSending), null);
    assert.notEqual(await subscriptions.findById(recentlyDeleted), null);

    await tables.dataSource.query(
      `INSERT INTO webhook_warning (subscription_id, at, kind, consecutive_failures)
       VALUES ($1, now() - interval '40 days', 'failing', 5), ($1, now() - interval '35 days', 'failing', 10),
              ($1, now(), 'failing', 15)`,
      [recentlyDeleted],
    );
    assert.equal(await subscriptions.purgeWarnings(30, 1), 1);
    assert.equal(await subscriptions.purgeWarnings(30, 10), 1);
    assert.deepEqual(
      (await subscriptions.warnings(recentlyDeleted, 10)).map((w) => w.consecutiveFailures),
      [15],
    );
  });

  describe('a subscription enabled or deleted while a fact is being published to it', () => {
    /** Runs `work` in a transaction that stays open until `commit()`; `done` is what work returned, once committed. */
    function openTransaction<T>(work: (tx: Transaction) => Promise<T>): {
      worked: Promise<T>;
      commit: () => void;
      done: Promise<T>;
    } {
      let commit = (): void => undefined;
      let workedNow = (_: T): void => undefined;
      let failed = (_: unknown): void => undefined;
      const worked = new Promise<T>((resolve, reject) => {
        workedNow = resolve;
        failed = reject;
      });
      const held = new Promise<void>((resolve) => (commit = resolve));
      const done = tables.unitOfWork.run(async (tx) => {
        const result = await work(tx).catch((error: unknown) => {
          failed(error);
          throw error;
        });
        workedNow(result);
        await held;
        return result;
      });
      return { worked, commit, done };
    }

    /** Whether `promise` is still unsettled after a moment (a statement waiting for a row lock). */
    async function stillWaiting(promise: Promise<unknown>): Promise<boolean> {
      const waiting = Symbol('waiting');
      const first = await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(waiting), 300))]);
      return first === waiting;
    }

    it('enabling waits for a publishing transaction that read the subscription as disabled, so its recovery sees that skipped delivery', async () => {
      const off = await insertSubscription(tables.dataSource, { principalId: 'org_a', enabled: false });
      const publishing = openTransaction((tx) => subscriptions.findOrderConfirmedRecipients('org_a', tx));
      let enabling: Promise<{ disabledSince: Date | null } | null> | undefined;
      try {
        assert.deepEqual(
          (await publishing.worked).map((r) => [r.subscriptionId, r.enabled]),
          [[off, false]],
        );
        enabling = tables.unitOfWork.run((tx) => subscriptions.enable(off, tx));
        assert.equal(await stillWaiting(enabling), true, 'the enable waits until the fact is published');
      } finally {
        publishing.commit();
        await publishing.done;
      }
      assert.notEqual((await enabling)?.disabledSince, null);
    });

    it('deleting waits for a publishing transaction that read the subscription as live, so its pending delivery is dropped too', async () => {
      const live = await insertSubscription(tables.dataSource, { principalId: 'org_a' });
      const publishing = openTransaction((tx) => subscriptions.findOrderConfirmedRecipients('org_a', tx));
      let deleting: Promise<boolean> | undefined;
      try {
        assert.deepEqual(idsOf(await publishing.worked), [live]);
        deleting = tables.unitOfWork.run((tx) => subscriptions.softDelete(ORGANISER_A, live, tx));
        assert.equal(await stillWaiting(deleting), true, 'the delete waits until the fact is published');
      } finally {
        publishing.commit();
        await publishing.done;
      }
      assert.equal(await deleting, true);
    });

    it('a fact published while the enable or delete is uncommitted reads the subscription as it is after it', async () => {
      const off = await insertSubscription(tables.dataSource, { principalId: 'org_a', enabled: false });
      const enabling = openTransaction((tx) => subscriptions.enable(off, tx));
      let reading: Promise<Array<{ subscriptionId: string; enabled: boolean }>> | undefined;
      try {
        await enabling.worked;
        reading = tables.unitOfWork.run((tx) => subscriptions.findOrderConfirmedRecipients('org_a', tx));
        assert.equal(await stillWaiting(reading), true, 'the read waits for the enable');
      } finally {
        enabling.commit();
        await enabling.done;
      }
      assert.deepEqual(
        (await reading).map((r) => [r.subscriptionId, r.enabled]),
        [[off, true]],
      );

      const deleting = openTransaction((tx) => subscriptions.softDelete(ORGANISER_A, off, tx));
      let readingAgain: Promise<unknown[]> | undefined;
      try {
        await deleting.worked;
        readingAgain = tables.unitOfWork.run((tx) => subscriptions.findOrderConfirmedRecipients('org_a', tx));
        assert.equal(await stillWaiting(readingAgain), true, 'the read waits for the delete');
      } finally {
        deleting.commit();
        await deleting.done;
      }
      assert.deepEqual(await readingAgain, [], 'a deleted subscription is no recipient');
    });
  });
});

/** The row a rotation left; fails the test when it was refused or found nothing. */
function rotatedRow(
  outcome: { rotated: WebhookSubscriptionEntity } | { graceRunsUntil: Date } | null,
): WebhookSubscriptionEntity {
  assert.ok(outcome !== null && 'rotated' in outcome, `not rotated: ${JSON.stringify(outcome)}`);
  return outcome.rotated;
}
