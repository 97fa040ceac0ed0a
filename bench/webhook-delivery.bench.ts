import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { ensureDatabase } from '../src/database/ensure-database';
import { runWhenExecuted } from './support/bench-environment';
import { summariseProfile, type ProfileSummary } from './support/cpu-profile';
import { generateReceiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../test/support/https-receiver';
import type { JsonClient } from './support/json-client';
import { percentile } from './support/delivery-figures';
import {
  cpuSoFar,
  createBenchOrganiser,
  createOrder,
  deliveryEnv,
  postmasterOf,
  pool,
  startBenchService,
  stopService,
  waitUntil,
} from './support/delivery-rig';
import { serviceNodeFlags } from './support/service-node-flags';
import { median } from './support/median';
import { STATEMENT_STATS_SETTINGS, statementStats, type StatementFigures } from './support/statement-stats';
import { Client } from 'pg';

/**
 * Webhook delivery, end to end on this machine: a real service process
 * (`node dist/src/main.js`) over an embedded PostgreSQL, delivering over
 * HTTPS to a receiver on 127.0.0.1 (loopback only).
 *
 * 1. Latency: orders confirmed through the internal API, one at a time (the
 *    default) or paced at `confirmationsPerSecond` without waiting for
 *    arrivals; the time from sending `confirm` to the webhook arriving.
 * 2. Throughput: a burst of confirmations fanned out to ten subscriptions;
 *    deliveries per second from the first confirm to the last arrival.
 */
export interface WebhookDeliveryOptions {
  latencyOrders: number;
  /** Null: each confirmation waits for the previous one's arrival. */
  confirmationsPerSecond: number | null;
  burstOrders: number;
  burstSubscriptions: number;
  burstConcurrency: number;
  /** Measured bursts (after one unmeasured warm-up burst a quarter the size); the report gives their medians. */
  burstRounds: number;
  /** Runs the service under `node --cpu-prof` and summarises the burst's samples. */
  profile?: boolean;
  /** Loads pg_stat_statements and reports the measured bursts' costliest statements. */
  statementStats?: boolean;
  /**
   * Delivery workers in processes of their own (SERVICE_ROLE=worker), the service then running as `api`:
   * confirmations go through it, deliveries leave from the workers. Unset: one service of role `all` does both.
   */
  workers?: number;
}

/** Confirmations before the measured ones: a fresh service's slowest deliveries are its first few. */
const LATENCY_WARMUP_CONFIRMATIONS = 50;

export const DEFAULT_WEBHOOK_OPTIONS: WebhookDeliveryOptions = {
  latencyOrders: 200,
  confirmationsPerSecond: null,
  burstOrders: 300,
  burstSubscriptions: 10,
  burstConcurrency: 8,
  burstRounds: 3,
};

/** What a burst writes: the outbox and its attempts, the subscriptions' health, the confirmed orders. */
const BURST_TABLES = [
  'webhook_delivery',
  'webhook_delivery_history',
  'webhook_delivery_turn',
  'webhook_delivery_attempt',
  'webhook_subscription',
  '"order"',
  'order_line_item',
];

/** When the first copy of an order's webhook arrived; the caller has waited for it. */
function firstArrival(arrivals: Map<string, number[]>, orderId: string): number {
  const first = arrivals.get(orderId)?.[0];
  if (first === undefined) throw new Error(`order ${orderId} has no arrival`);
  return first;
}

/** One measured burst: from the first confirm to the last arrival. */
export interface BurstRound {
  confirmSeconds: number;
  totalSeconds: number;
  deliveriesPerSecond: number;
  cpuMicrosPerDelivery: { service: number; postgres: number; bench: number };
}

export interface WebhookDeliveryReport {
  latency: {
    deliveries: number;
    confirmationsPerSecond: number | null;
    confirmToArrivalMs: { p50: number; p99: number; max: number };
    /** The unmeasured warm-up before them: how many, and the slowest (a fresh service's first deliveries). */
    coldStart: { deliveries: number; maxMs: number };
  };
  throughput: {
    subscriptions: number;
    /** Per round. */
    confirmations: number;
    deliveries: number;
    rounds: BurstRound[];
    /** The rest are the rounds' medians (each figure's own). */
    confirmSeconds: number;
    totalSeconds: number;
    deliveriesPerSecond: number;
    receiverMaxInFlight: number;
    /**
     * CPU per delivery during the burst (its confirmations included), in µs: the service, PostgreSQL,
     * and this process (receiver and clients). Steadier than the rate on a shared machine.
     */
    cpuMicrosPerDelivery: { service: number; postgres: number; bench: number };
  };
  /** Self time of the service during the burst, when profiled. */
  burstProfile?: ProfileSummary & { file: string };
  /** The measured bursts' costliest statements, when asked for. */
  burstStatements?: StatementFigures[];
}

export async function measureWebhookDelivery(
  options: WebhookDeliveryOptions = DEFAULT_WEBHOOK_OPTIONS,
): Promise<WebhookDeliveryReport> {
  const { latencyOrders, confirmationsPerSecond, burstOrders, burstSubscriptions, burstConcurrency, burstRounds } =
    options;
  const folder = mkdtempSync(join(tmpdir(), 'webhook-bench-'));
  const profileDirectory = join(folder, 'profile');
  const certificate = generateReceiverCertificate(folder);
  const database = await startEmbeddedPostgres({
    directory: join(folder, 'pg'),
    persistent: false,
    log: () => undefined,
    ...(options.statementStats === true ? { settings: STATEMENT_STATS_SETTINGS } : {}),
  });
  let service: ChildProcess | null = null;
  const workers: ChildProcess[] = [];
  let clients: JsonClient[] = [];
  let receiver: HttpsReceiver | null = null;
  try {
    await ensureDatabase(database.adminUrl, 'bench');
    // Arrival times are taken in the receiver's request handler, keyed by order id.
    const arrivals = new Map<string, number[]>();
    receiver = await startHttpsReceiver((request) => {
      const orderId = String(request.body?.data?.orderId);
      const list = arrivals.get(orderId) ?? [];
      list.push(performance.now());
      arrivals.set(orderId, list);
      return { status: 204 };
    }, certificate);
    const adminToken = randomBytes(16).toString('hex');
    const separateWorkers = options.workers ?? 0;
    const env = deliveryEnv({
      databaseUrl: database.urlFor('bench'),
      adminToken,
      secretKey: randomBytes(32).toString('hex'),
      certFile: certificate.certFile,
    });
    const started = await startBenchService(
      { ...env, DATA_DIR: join(folder, 'data'), SERVICE_ROLE: separateWorkers > 0 ? 'api' : 'all' },
      [
        ...serviceNodeFlags(),
        ...(options.profile === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDirectory}`] : []),
      ],
    );
    service = started.child;
    const { admin, api } = started;
    clients = [admin, api];
    for (let i = 0; i < separateWorkers; i += 1) {
      const worker = await startBenchService(
        { ...env, DATA_DIR: join(folder, `worker-${i}`), SERVICE_ROLE: 'worker' },
        serviceNodeFlags(),
      );
      workers.push(worker.child);
      clients.push(worker.admin, worker.api);
    }

    const organiser = await createBenchOrganiser(admin, 'Bench organiser');
    const { key } = organiser;
    const newOrder = (): Promise<{ id: string }> => createOrder(admin, organiser);

    // 1. Latency, one subscription.
    await api.call('POST', '/v1/webhooks', { url: `${receiver.origin}/latency`, events: ['order.confirmed'] }, key);
    /** Confirmation → first arrival of `count` confirmations, in the order they were sent. */
    const timeConfirmations = async (count: number): Promise<number[]> => {
      const times: number[] = [];
      if (confirmationsPerSecond === null) {
        for (let i = 0; i < count; i += 1) {
          const order = await newOrder();
          const sent = performance.now();
          await admin.call('POST', `/internal/orders/${order.id}/confirm`);
          await waitUntil(() => arrivals.has(order.id), 10_000, `order ${order.id} to arrive`);
          times.push(firstArrival(arrivals, order.id) - sent);
        }
        return times;
      }
      // Open loop: confirmation i is sent at i / rate seconds whatever the earlier ones are doing.
      const paced: Array<{ id: string }> = [];
      for (let i = 0; i < count; i += 1) paced.push(await newOrder());
      const sentAt = new Map<string, number>();
      const start = performance.now();
      await Promise.all(
        paced.map(async (order, i) => {
          const due = start + (i * 1000) / confirmationsPerSecond;
          await new Promise((done) => setTimeout(done, Math.max(0, due - performance.now())));
          sentAt.set(order.id, performance.now());
          await admin.call('POST', `/internal/orders/${order.id}/confirm`);
        }),
      );
      await waitUntil(
        () => paced.every((order) => arrivals.has(order.id)),
        30_000,
        'the paced confirmations to arrive',
      );
      return paced.map((order) => firstArrival(arrivals, order.id) - (sentAt.get(order.id) ?? 0));
    };
    // Unmeasured, like the HTTP scenarios' and the bursts' warm-ups: a fresh service's first deliveries
    // also pay for the JIT, each pooled connection's first statements and the first TLS handshake
    // (reported apart, as the cold start).
    const coldStart = await timeConfirmations(LATENCY_WARMUP_CONFIRMATIONS);
    const latencies = await timeConfirmations(latencyOrders);
    latencies.sort((a, b) => a - b);

    // 2. Throughput: ten subscriptions, a burst of confirmations.
    for (let i = 1; i < burstSubscriptions; i += 1) {
      await api.call(
        'POST',
        '/v1/webhooks',
        { url: `${receiver.origin}/burst/${i}`, events: ['order.confirmed'] },
        key,
      );
    }
    const postmasterPid = await postmasterOf(database.urlFor('bench'));
    const activeServices = [service, ...workers];
    /** One burst: `count` confirmations at `burstConcurrency`, until every delivery has arrived. */
    const burst = async (count: number): Promise<BurstRound> => {
      const orders: Array<{ id: string }> = [];
      for (let i = 0; i < count; i += 1) orders.push(await newOrder());
      const cpuBefore = cpuSoFar(activeServices, postmasterPid);
      const burstStart = performance.now();
      await pool(orders, burstConcurrency, async (order) => {
        await admin.call('POST', `/internal/orders/${order.id}/confirm`);
      });
      const confirmsDone = performance.now();
      const expected = count * burstSubscriptions;
      const delivered = (): number => orders.reduce((sum, order) => sum + (arrivals.get(order.id)?.length ?? 0), 0);
      await waitUntil(() => delivered() >= expected, 90_000, `${expected} burst deliveries`);
      const cpuAfter = cpuSoFar(activeServices, postmasterPid);
      const lastArrival = Math.max(...orders.map((order) => Math.max(...(arrivals.get(order.id) ?? [0]))));
      const burstSeconds = (lastArrival - burstStart) / 1000;
      return {
        confirmSeconds: Math.round((confirmsDone - burstStart) / 10) / 100,
        totalSeconds: Math.round(burstSeconds * 100) / 100,
        deliveriesPerSecond: Math.round(expected / burstSeconds),
        cpuMicrosPerDelivery: {
          service: Math.round((cpuAfter.service - cpuBefore.service) / expected),
          postgres: Math.round((cpuAfter.postgres - cpuBefore.postgres) / expected),
          bench: Math.round((cpuAfter.bench - cpuBefore.bench) / expected),
        },
      };
    };
    // As in the side-by-side HTTP runs: autovacuum, which would land in whichever round came next, is off for
    // the tables the bursts write; they are vacuumed and analysed between rounds instead, unmeasured, so each
    // round starts from the steady state a running system's autovacuum keeps (current statistics, and plans
    // made from them rather than from the near-empty tables of a fresh database).
    const maintenance = new Client({ connectionString: database.urlFor('bench') });
    await maintenance.connect();
    const settle = async (): Promise<void> => {
      await maintenance.query(`VACUUM (ANALYZE) ${BURST_TABLES.join(', ')}`);
      await maintenance.query('CHECKPOINT');
    };
    const rounds: BurstRound[] = [];
    let burstFromMicros = 0;
    let burstToMicros = 0;
    let burstStatements: StatementFigures[] | undefined;
    try {
      // Storage settings belong to the tables that hold rows: a partitioned table's are its partitions'.
      const { rows: leaves } = await maintenance.query<{ name: string }>(
        `SELECT t.relid::regclass::text AS name FROM unnest($1::regclass[]) AS b(rel), pg_partition_tree(b.rel) t
          WHERE t.isleaf`,
        [BURST_TABLES],
      );
      for (const { name } of leaves) await maintenance.query(`ALTER TABLE ${name} SET (autovacuum_enabled = false)`);
      // Unmeasured, like the HTTP scenarios' warm-up: the JIT compiles the burst's code paths here, not in a round.
      await burst(Math.max(1, Math.round(burstOrders / 4)));
      await settle();
      const statements = options.statementStats === true ? await statementStats(database.urlFor('bench')) : null;
      await statements?.start();
      burstFromMicros = Number(process.hrtime.bigint() / 1000n);
      for (let round = 0; round < burstRounds; round += 1) {
        rounds.push(await burst(burstOrders));
        await settle();
      }
      burstToMicros = Number(process.hrtime.bigint() / 1000n);
      burstStatements = await statements?.top(12);
      await statements?.close();
    } finally {
      await maintenance.end();
    }
    let burstProfile: (ProfileSummary & { file: string }) | undefined;
    if (options.profile === true) {
      await stopService(service);
      service = null;
      const file = readdirSync(profileDirectory).find((name) => name.endsWith('.cpuprofile'));
      if (file === undefined) throw new Error('the profiled service wrote no .cpuprofile');
      const results = resolve(__dirname, '..', '..', 'bench', 'results');
      mkdirSync(results, { recursive: true });
      const kept = join(results, 'service-webhook-burst.cpuprofile');
      copyFileSync(join(profileDirectory, file), kept);
      burstProfile = {
        ...summariseProfile(
          kept,
          { fromMicros: burstFromMicros, toMicros: burstToMicros },
          resolve(__dirname, '..', '..'),
          15,
        ),
        file: kept,
      };
    }

    return {
      latency: {
        deliveries: latencyOrders,
        confirmationsPerSecond,
        confirmToArrivalMs: {
          p50: Math.round(percentile(latencies, 50) * 10) / 10,
          p99: Math.round(percentile(latencies, 99) * 10) / 10,
          max: Math.round(percentile(latencies, 100) * 10) / 10,
        },
        coldStart: { deliveries: coldStart.length, maxMs: Math.round(Math.max(...coldStart) * 10) / 10 },
      },
      throughput: {
        subscriptions: burstSubscriptions,
        confirmations: burstOrders,
        deliveries: burstOrders * burstSubscriptions,
        rounds,
        confirmSeconds: median(rounds.map((round) => round.confirmSeconds)),
        totalSeconds: median(rounds.map((round) => round.totalSeconds)),
        deliveriesPerSecond: median(rounds.map((round) => round.deliveriesPerSecond)),
        receiverMaxInFlight: receiver.maxInFlight,
        cpuMicrosPerDelivery: {
          service: median(rounds.map((round) => round.cpuMicrosPerDelivery.service)),
          postgres: median(rounds.map((round) => round.cpuMicrosPerDelivery.postgres)),
          bench: median(rounds.map((round) => round.cpuMicrosPerDelivery.bench)),
        },
      },
      ...(burstProfile === undefined ? {} : { burstProfile }),
      ...(burstStatements === undefined ? {} : { burstStatements }),
    };
  } finally {
    for (const client of clients) client.close();
    for (const worker of workers) await stopService(worker);
    if (service !== null) await stopService(service);
    await receiver?.close();
    await database.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- webhook-delivery`. Settings (environment), defaults as
 * DEFAULT_WEBHOOK_OPTIONS; the side-by-side bench uses 50/s, 500 and 1000:
 *   BENCH_WEBHOOK_RATE          confirmations/s of the latency part (unset: one at a time)
 *   BENCH_WEBHOOK_LATENCY_ORDERS, BENCH_WEBHOOK_BURST_ORDERS, BENCH_WEBHOOK_BURST_ROUNDS
 *   BENCH_PROFILE=1             the service under `node --cpu-prof`; the burst's top costs are printed
 *   BENCH_PG_STATEMENTS=1       PostgreSQL's costliest statements of the measured bursts (pg_stat_statements)
 */
export async function main(): Promise<void> {
  const number = (name: string, fallback: number): number => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
    return value;
  };
  const rate = process.env['BENCH_WEBHOOK_RATE'];
  const report = await measureWebhookDelivery({
    ...DEFAULT_WEBHOOK_OPTIONS,
    latencyOrders: number('BENCH_WEBHOOK_LATENCY_ORDERS', DEFAULT_WEBHOOK_OPTIONS.latencyOrders),
    confirmationsPerSecond: rate === undefined ? null : number('BENCH_WEBHOOK_RATE', 50),
    burstOrders: number('BENCH_WEBHOOK_BURST_ORDERS', DEFAULT_WEBHOOK_OPTIONS.burstOrders),
    burstRounds: number('BENCH_WEBHOOK_BURST_ROUNDS', DEFAULT_WEBHOOK_OPTIONS.burstRounds),
    profile: process.env['BENCH_PROFILE'] === '1',
    statementStats: process.env['BENCH_PG_STATEMENTS'] === '1',
  });
  process.stdout.write(`${JSON.stringify({ loadAverage: loadavg(), ...report }, null, 2)}\n`);
}

runWhenExecuted(module, main);
