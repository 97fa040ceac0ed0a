import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { serialiseEnvelope } from '../src/webhooks/outbox/webhook-envelope';
import type { SqlStatement } from '../src/database/sql/sql-statement';
import {
  FIRST_FAILING_WARNING_AT,
  RECORD_ATTEMPT,
  RECORD_SUCCESSES,
} from '../src/webhooks/delivery/attempt-record.repository';
import { CLAIM_STATEMENTS } from '../src/webhooks/delivery/delivery-claim.repository';
import { DELIVERY_CHANNEL, ENQUEUE_DELIVERIES } from '../src/webhooks/delivery/delivery-queue.repository';
import { FAILURES_BEFORE_DISABLE } from '../src/webhooks/webhook-event-types';
import { benchDatabase, runWhenExecuted } from './support/bench-environment';
import { processCpuMicros } from './support/proc-usage';

/**
 * PostgreSQL's CPU per statement of webhook delivery, one statement at a
 * time: one client, nothing concurrent, so nothing waits and each figure is
 * the work the statement itself costs. The delivery bench measures the whole
 * (service, PostgreSQL and receiver at once); this one says which statement
 * the PostgreSQL part is made of.
 *
 * On a scratch database of the real schema with ten subscriptions: each
 * round inserts a confirmation's ten deliveries (the outbox insert), claims
 * them as the worker does (`BEGIN`, the claim's two statements, `COMMIT`),
 * and records each attempt as a success. The backend's CPU comes from
 * `/proc/<pid>/schedstat` (nanoseconds), read around every statement.
 *
 * `BENCH_STATEMENT_ROUNDS` (300) rounds; `BENCH_PLAN_CACHE_MODE` sets the
 * session's `plan_cache_mode` (`auto`, `force_generic_plan`,
 * `force_custom_plan`) to compare plans.
 */
const SUBSCRIPTIONS = 10;

/** A statement as pg's client takes it (named, so prepared as the service prepares it). */
function queryOf<Params extends object>(
  statement: SqlStatement<Params>,
  params: Params,
): { name: string | undefined; text: string; values: unknown[] } {
  return { name: statement.name, text: statement.text, values: statement.values(params) };
}

export interface StatementCosts {
  rounds: number;
  planCacheMode: string;
  /** Mean backend CPU per execution, µs, and how many ran. */
  statements: Record<string, { micros: number; executions: number }>;
  /** Per delivery, µs: each statement's CPU spread over the deliveries it served. */
  perDelivery: Record<string, number>;
}

export async function measureStatementCosts(rounds: number, planCacheMode: string): Promise<StatementCosts> {
  const environment = await benchDatabase(async (db) => {
    await db.query(
      `INSERT INTO webhook_subscription (id, principal_type, principal_id, url, events, secret_sealed)
       SELECT 'whk_bench_' || n, 'organiser', 'org_bench', 'https://receiver.example/hook', '{order.confirmed}', 'sealed'
         FROM generate_series(1, $1::int) AS n`,
      [SUBSCRIPTIONS],
    );
  });
  const client = new Client({ connectionString: environment.databaseUrl });
  await client.connect();
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    if (pid === undefined) throw new Error('no backend pid');
    await client.query(`SELECT set_config('plan_cache_mode', $1, false)`, [planCacheMode]);
    const cpuMicros = (): number => processCpuMicros(pid);
    const totals = new Map<string, { micros: number; executions: number }>();
    const measured = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      const before = cpuMicros();
      const result = await run();
      const total = totals.get(name) ?? { micros: 0, executions: 0 };
      total.micros += cpuMicros() - before;
      total.executions += 1;
      totals.set(name, total);
      return result;
    };
    const subscriptionIds = Array.from({ length: SUBSCRIPTIONS }, (_, i) => `whk_bench_${i + 1}`);
    let deliveries = 0;
    for (let round = 0; round < rounds; round += 1) {
      const orderId = `ord_bench_${round}`;
      const ids = subscriptionIds.map(() => randomUUID());
      const payloads = ids.map((id) =>
        serialiseEnvelope({
          id,
          type: 'order.confirmed',
          createdAt: new Date().toISOString(),
          principal: { type: 'organiser', id: 'org_bench' },
          data: { orderId, eventId: 'evt_bench', status: 'confirmed', totalAmountMinor: 1000, currency: 'EUR' },
        }),
      );
      await measured('outbox insert (10 deliveries)', () =>
        client.query(
          queryOf(ENQUEUE_DELIVERIES, {
            ids,
            subscriptionIds,
            eventTypes: ids.map(() => 'order.confirmed'),
            subjectIds: ids.map(() => orderId),
            payloads,
            traceIds: ids.map(() => randomUUID().replaceAll('-', '')),
            statuses: ids.map(() => 'pending'),
            channel: DELIVERY_CHANNEL,
            sender: 'webhook-statements-bench',
          }),
        ),
      );
      const token = randomUUID();
      await measured('claim: BEGIN', () => client.query('BEGIN'));
      const chosen = await measured('claim: subscriptions', () =>
        client.query<{ id: string; from_seq: string }>(
          queryOf(CLAIM_STATEMENTS.subscriptions, { maxDeliveries: 64, perSubscription: 4 }),
        ),
      );
      const claimed = await measured('claim: deliveries', () =>
        client.query<{ id: string; subscription_id: string }>(
          queryOf(CLAIM_STATEMENTS.deliveries, {
            subscriptionIds: chosen.rows.map((r) => r.id),
            perSubscription: 4,
            maxDeliveries: 64,
            leaseMs: 15_000,
            leaseToken: token,
            rotate: chosen.rows.length >= 64,
          }),
        ),
      );
      await measured('claim: recheck', () =>
        client.query(
          queryOf(CLAIM_STATEMENTS.recheck, {
            subscriptionIds: chosen.rows.map((r) => r.id),
            fromSeqs: chosen.rows.map((r) => r.from_seq),
          }),
        ),
      );
      await measured('claim: COMMIT', () => client.query('COMMIT'));
      // Every other round records its ten successes as the worker does at volume, in one statement.
      if (round % 2 === 1) {
        await measured(`attempt record (a batch of ${claimed.rows.length})`, () =>
          client.query(
            queryOf(RECORD_SUCCESSES, {
              deliveryIds: claimed.rows.map((d) => d.id),
              leaseTokens: claimed.rows.map(() => token),
              subscriptionIds: claimed.rows.map((d) => d.subscription_id),
              attemptedAts: claimed.rows.map(() => new Date()),
              outcomes: claimed.rows.map(() => '200'),
              durationsMs: claimed.rows.map(() => 5),
              httpStatuses: claimed.rows.map(() => 200),
              responseExcerpts: claimed.rows.map(() => ''),
              manual: claimed.rows.map(() => false),
            }),
          ),
        );
        deliveries += claimed.rows.length;
        continue;
      }
      for (const delivery of claimed.rows) {
        await measured('attempt record (1 attempt)', () =>
          client.query(
            queryOf(RECORD_ATTEMPT, {
              deliveryId: delivery.id,
              leaseToken: token,
              attemptedAt: new Date(),
              outcome: '200',
              durationMs: 5,
              httpStatus: 200,
              responseExcerpt: '',
              succeeded: true,
              failuresBeforeDisable: FAILURES_BEFORE_DISABLE,
              subscriptionId: delivery.subscription_id,
              nextStatus: 'succeeded',
              retryInMs: 0,
              manual: false,
              failingWarningFrom: FIRST_FAILING_WARNING_AT,
            }),
          ),
        );
        deliveries += 1;
      }
    }
    const statements = Object.fromEntries(
      [...totals].map(([name, total]) => [
        name,
        { micros: Math.round(total.micros / total.executions), executions: total.executions },
      ]),
    );
    const perDelivery = Object.fromEntries(
      [...totals].map(([name, total]) => [name, Math.round(total.micros / Math.max(1, deliveries))]),
    );
    return { rounds, planCacheMode, statements, perDelivery };
  } finally {
    await client.end();
    await environment.database.stop();
    rmSync(environment.folder, { recursive: true, force: true });
  }
}

export async function main(): Promise<void> {
  const rounds = Number(process.env['BENCH_STATEMENT_ROUNDS'] ?? 300);
  if (!Number.isInteger(rounds) || rounds <= 0) throw new Error('BENCH_STATEMENT_ROUNDS must be a positive integer');
  const report = await measureStatementCosts(rounds, process.env['BENCH_PLAN_CACHE_MODE'] ?? 'auto');
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

runWhenExecuted(module, main);
