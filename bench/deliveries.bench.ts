import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/database/embedded-postgres';
import { ensureDatabase } from '../src/database/ensure-database';
import { generateReceiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../test/support/https-receiver';
import { runWhenExecuted } from './support/bench-environment';
import { loadAverageAtStart, machineReport } from './support/bench-machine';
import {
  flatness,
  histogramBuckets,
  histogramQuantile,
  latencySummary,
  metricValue,
  type Buckets,
  type Flatness,
  type LatencySummary,
} from './support/delivery-figures';
import {
  cpuPerDelivery,
  cpuSoFar,
  createBenchOrganiser,
  createOrder,
  deliveryEnv,
  metricsText,
  pool,
  postmasterOf,
  sleep,
  startBenchService,
  stopService,
  waitUntil,
  type BenchOrganiser,
  type BenchService,
  type CpuReading,
} from './support/delivery-rig';
import { serviceNodeFlags } from './support/service-node-flags';
import { median } from './support/median';
import { markdownTargets, type Target } from './support/side-by-side-report';
import { measureWebhookDelivery, type WebhookDeliveryReport } from './webhook-delivery.bench';

/**
 * `npm run bench -- deliveries`: webhook delivery under four scenarios, each
 * on a fresh embedded PostgreSQL with the service in processes of its own (an
 * `api` instance that takes the confirmations, a `worker` that delivers), over
 * HTTPS to receivers on 127.0.0.1. The bench drives the service only through
 * its HTTP APIs (`/internal/orders`, `/v1/webhooks`, `/internal/metrics`) and
 * never reads or writes the delivery tables, whose layout may change.
 *
 * 1. Empty queue: bursts of confirmations fanned out to ten subscriptions (the
 *    webhook-delivery bench): deliveries/s from the first confirmation to the
 *    last arrival, CPU per delivery, and confirmation → arrival at 50/s.
 * 2. A million pending: a backlog made through the product with no worker
 *    running, then a worker's drain rate over a window, its RSS each second,
 *    and the latency of probe confirmations to a subscription of their own.
 * 3. A hogging subscriber: (a) one subscription with a large backlog, (b) one
 *    whose receiver never answers; the other subscriptions' p99 at 50/s.
 * 4. A held horizon: one REPEATABLE READ transaction holding its snapshot
 *    while bursts run on; the last window's throughput against the one before.
 *
 * An account has at most ten subscriptions and an order's `order.confirmed`
 * goes to its organiser's, so "N subscriptions" are N / 10 organisers of ten,
 * and a backlog of `orders × subscriptions` deliveries is `orders`
 * confirmations per organiser. Settings: see SETTINGS below and
 * docs/performance.md. Writes bench/results/deliveries.json.
 */

const setting = (name: string, fallback: number, min = 0): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number of at least ${min}`);
  return value;
};
const SETTINGS = {
  /** Runs of each scenario's measurement; the figures are their medians. */
  rounds: setting('BENCH_DELIVERY_ROUNDS', 3, 1),
  /** Confirmations per burst (each to ten subscriptions). */
  burstOrders: setting('BENCH_BURST_ORDERS', 1000, 1),
  /** Confirmations of the empty queue's latency part, paced at 50/s. */
  latencyOrders: setting('BENCH_LATENCY_ORDERS', 500, 1),
  backlogSubscriptions: setting('BENCH_BACKLOG_SUBSCRIPTIONS', 1000, 1),
  /** Confirmations per organiser of ten subscriptions: the backlog is this × BENCH_BACKLOG_SUBSCRIPTIONS. */
  backlogOrders: setting('BENCH_BACKLOG_ORDERS', 1000, 1),
  drainSeconds: setting('BENCH_DRAIN_SECONDS', 60, 1),
  /** Before the drain window: a fresh worker's JIT, pools and heap settle (its RSS is judged after this). */
  drainWarmupSeconds: setting('BENCH_DRAIN_WARMUP_SECONDS', 10, 0),
  /** Beside a hog, the others' confirmations before the measured ones. */
  warmupSeconds: setting('BENCH_WARMUP_SECONDS', 10, 0),
  hogBacklog: setting('BENCH_HOG_BACKLOG', 100_000, 1),
  /** How long the others' confirmations are measured beside a hog. */
  fairSeconds: setting('BENCH_FAIR_SECONDS', 30, 1),
  /** WEBHOOK_TIMEOUT_MS (and the retry wait) of the service beside a receiver that never answers. */
  hangTimeoutMs: setting('BENCH_HANG_TIMEOUT_MS', 1000, 1),
  holdSeconds: setting('BENCH_HOLD_SECONDS', 300, 2),
  /** Concurrent confirmations while making a backlog or a burst. */
  concurrency: setting('BENCH_CONFIRM_CONCURRENCY', 8, 1),
};
const SCENARIO_FILTER = (process.env['BENCH_DELIVERY_SCENARIOS'] ?? '')
  .split(',')
  .map((part) => part.trim().toLowerCase())
  .filter((part) => part !== '');
/** Confirmations per second beside a hog, and of the empty queue's latency part. */
const PACED_RATE = 50;
/** Probe confirmations per second during a drain or a hold. */
const PROBE_RATE = 1;
/** The last minute of the hold, or its second half when it is shorter than two minutes. */
const HOLD_WINDOW_SECONDS = Math.min(60, SETTINGS.holdSeconds / 2);
const PER_ORGANISER = 10;
const RESULTS = resolve(__dirname, '..', '..', 'bench', 'results');
/** The claim-time histogram the held-horizon target reads, once the service exposes it. */
const CLAIM_HISTOGRAM = 'webhook_claim_duration_seconds';

const log = (line: string): void => void process.stderr.write(`[deliveries] ${line}\n`);
const round1 = (value: number): number => Math.round(value * 10) / 10;
const ratio = (value: number, of: number): number => (of === 0 ? 0 : Math.round((value / of) * 100) / 100);

/**
 * Arrivals at the receivers, counted by the first part of their path (the
 * group: `/backlog/3` is `backlog`), and confirm → arrival for every order
 * whose confirmation the bench timed. Nothing else is kept, so a million
 * arrivals cost a few counters.
 */
class ArrivalLog {
  private readonly counts = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private readonly sentAt = new Map<string, number>();
  /** Per group: [when the confirmation was sent, confirm → arrival ms]. */
  private readonly latencies = new Map<string, Array<[number, number]>>();

  record(path: string, orderId: string, at: number): void {
    const group = path.split('/')[1] ?? '';
    this.counts.set(group, (this.counts.get(group) ?? 0) + 1);
    this.last.set(group, at);
    const sent = this.sentAt.get(orderId);
    if (sent !== undefined) {
      const list = this.latencies.get(group) ?? [];
      list.push([sent, at - sent]);
      this.latencies.set(group, list);
    }
  }

  /** Times the order's confirmation from now. */
  sending(orderId: string): void {
    this.sentAt.set(orderId, performance.now());
  }

  count(group: string): number {
    return this.counts.get(group) ?? 0;
  }

  lastArrival(group: string): number {
    return this.last.get(group) ?? 0;
  }

  /**
   * The group's confirm → arrival times (ms) of confirmations sent at or
   * after `since` (performance.now()), and forgets all it had: each window
   * counts its own confirmations, not the late arrivals of the one before.
   */
  takeLatencies(group: string, since = -Infinity): number[] {
    const list = this.latencies.get(group) ?? [];
    this.latencies.delete(group);
    return list.filter(([sent]) => sent >= since).map(([, ms]) => ms);
  }
}

/** A fresh embedded PostgreSQL, a receiver, an `api` instance, and workers on demand. */
interface Rig {
  arrivals: ArrivalLog;
  receiver: HttpsReceiver;
  api: BenchService;
  adminToken: string;
  databaseUrl: string;
  postmasterPid: number;
  startWorker(): Promise<BenchService>;
  /** The service processes running now (for CPU readings). */
  services(): BenchService[];
  stopWorker(worker: BenchService): Promise<void>;
  close(): Promise<void>;
}

async function startRig(name: string, extraEnv: Record<string, string> = {}): Promise<Rig> {
  const folder = mkdtempSync(join(tmpdir(), `deliveries-${name}-`));
  const certificate = generateReceiverCertificate(folder);
  let database: EmbeddedDatabase | null = null;
  let receiver: HttpsReceiver | null = null;
  const running: BenchService[] = [];
  const close = async (): Promise<void> => {
    for (const service of running.reverse()) {
      service.admin.close();
      service.api.close();
      await stopService(service.child);
    }
    await receiver?.close();
    await database?.stop();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    database = await startEmbeddedPostgres({ directory: join(folder, 'pg'), persistent: false, log: () => undefined });
    await ensureDatabase(database.adminUrl, 'bench');
    const databaseUrl = database.urlFor('bench');
    const arrivals = new ArrivalLog();
    // A path under /hang is never answered (the service's timeout ends each attempt); every other is at once.
    receiver = await startHttpsReceiver(
      (request) => {
        arrivals.record(request.path, String(request.body?.data?.orderId), performance.now());
        return request.path.startsWith('/hang') ? 'hang' : { status: 204 };
      },
      certificate,
      { keepRequests: false },
    );
    const adminToken = randomBytes(16).toString('hex');
    const env = {
      ...deliveryEnv({
        databaseUrl,
        adminToken,
        secretKey: randomBytes(32).toString('hex'),
        certFile: certificate.certFile,
      }),
      ...extraEnv,
    };
    let started = 0;
    const start = async (role: 'api' | 'worker'): Promise<BenchService> => {
      started += 1;
      const service = await startBenchService(
        { ...env, SERVICE_ROLE: role, DATA_DIR: join(folder, `${role}-${started}`) },
        serviceNodeFlags(),
      );
      running.push(service);
      return service;
    };
    const api = await start('api');
    return {
      arrivals,
      receiver,
      api,
      adminToken,
      databaseUrl,
      postmasterPid: await postmasterOf(databaseUrl),
      startWorker: () => start('worker'),
      services: () => [...running],
      async stopWorker(worker) {
        worker.admin.close();
        worker.api.close();
        await stopService(worker.child);
        running.splice(running.indexOf(worker), 1);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Organisers of ten subscriptions each (the last maybe fewer), `count` in all, to `${receiver}/${group}/<n>`. */
async function subscribe(
  rig: Rig,
  group: string,
  count: number,
): Promise<Array<BenchOrganiser & { subscriptionIds: string[] }>> {
  const organisers: Array<BenchOrganiser & { subscriptionIds: string[] }> = [];
  for (let made = 0; made < count;) {
    const organiser = await createBenchOrganiser(rig.api.admin, `Bench ${group} ${organisers.length + 1}`);
    const subscriptionIds: string[] = [];
    for (let i = 0; i < PER_ORGANISER && made < count; i += 1, made += 1) {
      const webhook = await rig.api.api.call(
        'POST',
        '/v1/webhooks',
        { url: `${rig.receiver.origin}/${group}/${made}`, events: ['order.confirmed'] },
        organiser.key,
      );
      subscriptionIds.push(webhook.id as string);
    }
    organisers.push({ ...organiser, subscriptionIds });
  }
  return organisers;
}

/** `orders` confirmations for each organiser, created `confirmed` (each fans out to its subscriptions), progress logged. */
async function confirmMany(rig: Rig, organisers: BenchOrganiser[], orders: number, what: string | null): Promise<void> {
  const total = orders * organisers.length;
  let done = 0;
  let logged = 0;
  const started = performance.now();
  function* work(): Generator<BenchOrganiser> {
    for (let i = 0; i < orders; i += 1) for (const organiser of organisers) yield organiser;
  }
  await pool(work(), SETTINGS.concurrency, async (organiser) => {
    await createOrder(rig.api.admin, organiser, 'confirmed');
    done += 1;
    // Every tenth of a large backlog, so a long wait shows it is moving.
    if (what !== null && total >= 10_000 && done - logged >= total / 10) {
      logged = done;
      log(`${what}: ${done} of ${total} confirmations (${Math.round((performance.now() - started) / 1000)} s)`);
    }
  });
}

/**
 * Open loop: from now for `seconds`, `rate` confirmations a second to each of
 * `organisers` in turn, whatever the earlier ones are doing; each one's
 * confirm is timed to its arrivals (the order is created pending first).
 */
async function paced(rig: Rig, organisers: BenchOrganiser[], rate: number, seconds: number): Promise<number> {
  const start = performance.now();
  const count = Math.round(rate * seconds);
  const sends: Promise<void>[] = [];
  for (let i = 0; i < count; i += 1) {
    const due = start + (i * 1000) / rate;
    await sleep(Math.max(0, due - performance.now()));
    const organiser = organisers[i % organisers.length]!;
    sends.push(
      (async () => {
        const order = await createOrder(rig.api.admin, organiser);
        rig.arrivals.sending(order.id);
        await rig.api.admin.call('POST', `/internal/orders/${order.id}/confirm`);
      })(),
    );
  }
  await Promise.all(sends);
  return count;
}

/** Waits until the group has `count` arrivals, or says how many are missing after `timeoutMs`. */
async function arrived(rig: Rig, group: string, count: number, timeoutMs: number): Promise<number> {
  try {
    await waitUntil(() => rig.arrivals.count(group) >= count, timeoutMs, `${count} arrivals at /${group}`);
    return 0;
  } catch {
    return count - rig.arrivals.count(group);
  }
}

function rssMiB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

const cpuReading = (rig: Rig): CpuReading =>
  cpuSoFar(
    rig.services().map((service) => service.child),
    rig.postmasterPid,
  );
/** Deliveries per CPU-second of the service and PostgreSQL together: deliveries/s per core kept busy. */
const perCore = (cpu: CpuReading): number =>
  cpu.service + cpu.postgres === 0 ? 0 : Math.round(1_000_000 / (cpu.service + cpu.postgres));

// ---------------------------------------------------------------------------------------------- 1. empty queue

interface EmptyQueueResult {
  deliveriesPerSecond: number;
  cpuMicrosPerDelivery: CpuReading;
  deliveriesPerCpuSecond: number;
  confirmToArrivalMs: LatencySummary;
  report: WebhookDeliveryReport;
}

async function emptyQueue(): Promise<EmptyQueueResult> {
  // The same processes as the other scenarios (an api instance and one worker), so their rates compare.
  const report = await measureWebhookDelivery({
    latencyOrders: SETTINGS.latencyOrders,
    confirmationsPerSecond: PACED_RATE,
    burstOrders: SETTINGS.burstOrders,
    burstSubscriptions: 10,
    burstConcurrency: SETTINGS.concurrency,
    burstRounds: SETTINGS.rounds,
    workers: 1,
  });
  const { deliveriesPerSecond, cpuMicrosPerDelivery } = report.throughput;
  const { p50, p99, max } = report.latency.confirmToArrivalMs;
  return {
    deliveriesPerSecond,
    cpuMicrosPerDelivery,
    deliveriesPerCpuSecond: perCore(cpuMicrosPerDelivery),
    confirmToArrivalMs: { count: report.latency.deliveries, p50, p99, max },
    report,
  };
}

// ------------------------------------------------------------------------------------------ 2. a million pending

interface DrainRound {
  pendingAtStart: number;
  pendingAtEnd: number;
  windowSeconds: number;
  /** True when the backlog ran out inside the window: the rate then counts to its last arrival. */
  ranOut: boolean;
  deliveriesPerSecond: number;
  cpuMicrosPerDelivery: CpuReading;
  deliveriesPerCpuSecond: number;
  workerRssMiB: number[];
  rss: Flatness | null;
  probeMs: LatencySummary | null;
}

interface MillionPendingResult {
  subscriptions: number;
  backlog: number;
  /** `webhook_pending_deliveries` as the api instance reported it once the backlog was made. */
  pendingReported: number | null;
  backlogSeconds: number;
  rounds: DrainRound[];
  /** Rounds whose backlog ran out before the window began. */
  unmeasured: number;
  /** Null when no round was measured. */
  deliveriesPerSecond: number | null;
  deliveriesPerCpuSecond: number | null;
  rssChange: number | null;
  probeP99Ms: number | null;
}

async function millionPending(): Promise<MillionPendingResult> {
  const subscriptions = SETTINGS.backlogSubscriptions;
  const backlog = SETTINGS.backlogOrders * subscriptions;
  const rig = await startRig('pending');
  try {
    const organisers = await subscribe(rig, 'backlog', subscriptions);
    const [probe] = await subscribe(rig, 'probe', 1);
    const backlogStart = performance.now();
    await confirmMany(rig, organisers, SETTINGS.backlogOrders, 'backlog');
    const backlogSeconds = Math.round((performance.now() - backlogStart) / 1000);
    const pendingReported = metricValue(
      await metricsText(rig.api.adminUrl, rig.adminToken),
      'webhook_pending_deliveries',
    );
    log(`backlog made: ${backlog} deliveries in ${backlogSeconds} s (the service reports ${pendingReported} pending)`);
    let made = backlog;
    let unmeasured = 0;
    const rounds: DrainRound[] = [];
    for (let round = 1; round <= SETTINGS.rounds; round += 1) {
      // Each round starts from the full backlog: what the last one drained is confirmed again, with no worker running.
      const perOrganiser = Math.ceil((backlog - (made - rig.arrivals.count('backlog'))) / subscriptions);
      if (round > 1 && perOrganiser > 0) {
        await confirmMany(rig, organisers, perOrganiser, `backlog top-up for round ${round}`);
        made += perOrganiser * subscriptions;
      }
      const worker = await rig.startWorker();
      const pending = (): number => made - rig.arrivals.count('backlog');
      await sleep(SETTINGS.drainWarmupSeconds * 1000);
      const pendingAtStart = pending();
      if (pendingAtStart <= 0) {
        log(`drain round ${round}: the backlog ran out during the warm-up; nothing measured`);
        unmeasured += 1;
        await rig.stopWorker(worker);
        continue;
      }
      const countBefore = rig.arrivals.count('backlog');
      const cpuBefore = cpuReading(rig);
      const start = performance.now();
      const samples: number[] = [];
      const probesBefore = rig.arrivals.count('probe');
      const probes: Promise<number>[] = [];
      // One RSS sample and the probes of a second, each second, until the window ends or the backlog runs out.
      for (let second = 0; second < SETTINGS.drainSeconds && pending() > 0; second += 1) {
        samples.push(rssMiB(worker.child.pid ?? 0));
        probes.push(paced(rig, [probe!], PROBE_RATE, 1));
        await sleep(Math.max(0, start + (second + 1) * 1000 - performance.now()));
      }
      samples.push(rssMiB(worker.child.pid ?? 0));
      const ranOut = pending() <= 0;
      const end = ranOut ? rig.arrivals.lastArrival('backlog') : performance.now();
      const delivered = rig.arrivals.count('backlog') - countBefore;
      const cpu = cpuPerDelivery(cpuBefore, cpuReading(rig), delivered);
      const probesSent = (await Promise.all(probes)).reduce((sum, sent) => sum + sent, 0);
      await arrived(rig, 'probe', probesBefore + probesSent, 30_000);
      const windowSeconds = Math.max(0.001, (end - start) / 1000);
      await rig.stopWorker(worker);
      const result: DrainRound = {
        pendingAtStart,
        pendingAtEnd: pending(),
        windowSeconds: round1(windowSeconds),
        ranOut,
        deliveriesPerSecond: Math.round(delivered / windowSeconds),
        cpuMicrosPerDelivery: cpu,
        deliveriesPerCpuSecond: perCore(cpu),
        workerRssMiB: samples.map(round1),
        rss: flatness(samples),
        probeMs: latencySummary(rig.arrivals.takeLatencies('probe', start)),
      };
      log(`drain round ${round}: ${JSON.stringify({ ...result, workerRssMiB: undefined })}`);
      rounds.push(result);
    }
    return {
      subscriptions,
      backlog,
      pendingReported,
      backlogSeconds,
      rounds,
      unmeasured,
      deliveriesPerSecond: medianOrNull(rounds.map((round) => round.deliveriesPerSecond)),
      deliveriesPerCpuSecond: medianOrNull(rounds.map((round) => round.deliveriesPerCpuSecond)),
      rssChange: thousandthMedian(rounds.map((round) => round.rss?.change)),
      probeP99Ms: medianOrNull(rounds.map((round) => round.probeMs?.p99)),
    };
  } finally {
    await rig.close();
  }
}

function medianOrNull(values: Array<number | undefined>): number | null {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? null : round1(median(known));
}

function thousandthMedian(values: Array<number | undefined>): number | null {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? null : Math.round(median(known) * 1000) / 1000;
}

// ---------------------------------------------------------------------------------------- 3. a hogging subscriber

interface FairRound {
  othersMs: LatencySummary | null;
  /** Others' deliveries that had not arrived 30 s after the last confirmation. */
  othersMissing: number;
  /** (a) The hog's deliveries during the round and still waiting at its end; (b) the attempts its receiver saw. */
  hogDelivered: number;
  hogWaitingAtEnd?: number;
  hogEnabledAtEnd?: boolean;
}

interface HoggingResult {
  backlog: { hogBacklog: number; rounds: FairRound[]; othersP99Ms: number | null };
  timeouts: { timeoutMs: number; rounds: FairRound[]; othersP99Ms: number | null };
}

/** The others' confirmations at 50/s for warm-up + the measured seconds; only those after the warm-up count. */
async function othersBesideHog(rig: Rig, others: BenchOrganiser[], hogStream?: BenchOrganiser): Promise<FairRound> {
  const hogBefore = rig.arrivals.count(hogStream === undefined ? 'hog' : 'hang');
  const othersBefore = rig.arrivals.count('others');
  let confirmations = 0;
  const streams = async (seconds: number): Promise<void> => {
    const [sent] = await Promise.all([
      paced(rig, others, PACED_RATE, seconds),
      ...(hogStream === undefined ? [] : [paced(rig, [hogStream], PACED_RATE, seconds)]),
    ]);
    confirmations += sent;
  };
  if (SETTINGS.warmupSeconds > 0) await streams(SETTINGS.warmupSeconds);
  const measuredFrom = performance.now();
  await streams(SETTINGS.fairSeconds);
  // Every confirmation reaches each of the organiser's ten subscriptions.
  const missing = await arrived(rig, 'others', othersBefore + confirmations * PER_ORGANISER, 30_000);
  return {
    othersMs: latencySummary(rig.arrivals.takeLatencies('others', measuredFrom)),
    othersMissing: missing,
    hogDelivered: rig.arrivals.count(hogStream === undefined ? 'hog' : 'hang') - hogBefore,
  };
}

async function hoggingSubscriber(): Promise<HoggingResult> {
  // (a) One subscription with a backlog, made with no worker running; then ten others and a worker.
  const backlogRounds: FairRound[] = [];
  const rigA = await startRig('hog');
  try {
    const [hog] = await subscribe(rigA, 'hog', 1);
    await confirmMany(rigA, [hog!], SETTINGS.hogBacklog, 'hog backlog');
    let made = SETTINGS.hogBacklog;
    const others = await subscribe(rigA, 'others', PER_ORGANISER);
    for (let round = 1; round <= SETTINGS.rounds; round += 1) {
      const topUp = SETTINGS.hogBacklog - (made - rigA.arrivals.count('hog'));
      if (round > 1 && topUp > 0) {
        await confirmMany(rigA, [hog!], topUp, `hog top-up for round ${round}`);
        made += topUp;
      }
      const worker = await rigA.startWorker();
      const result = await othersBesideHog(rigA, others);
      await rigA.stopWorker(worker);
      result.hogWaitingAtEnd = made - rigA.arrivals.count('hog');
      log(`hog backlog round ${round}: ${JSON.stringify(result)}`);
      backlogRounds.push(result);
    }
  } finally {
    await rigA.close();
  }

  // (b) One subscription whose receiver never answers, fed as steadily as the others: every attempt times out.
  const timeoutRounds: FairRound[] = [];
  const rigB = await startRig('hang', {
    WEBHOOK_TIMEOUT_MS: String(SETTINGS.hangTimeoutMs),
    // Retried as soon as allowed, so the failing subscription keeps asking for a slot through the window.
    WEBHOOK_BACKOFF_BASE_MS: String(SETTINGS.hangTimeoutMs),
    WEBHOOK_BACKOFF_MAX_MS: String(SETTINGS.hangTimeoutMs),
  });
  try {
    const [hang] = await subscribe(rigB, 'hang', 1);
    const others = await subscribe(rigB, 'others', PER_ORGANISER);
    const hangId = hang!.subscriptionIds[0]!;
    const worker = await rigB.startWorker();
    for (let round = 1; round <= SETTINGS.rounds; round += 1) {
      // Consecutive failures disable a subscription; each round starts with it enabled and failing afresh.
      const state = await rigB.api.admin.call('GET', `/internal/webhooks/${hangId}`);
      if (state.enabled !== true) await rigB.api.admin.call('POST', `/internal/webhooks/${hangId}/enable`, {});
      const result = await othersBesideHog(rigB, others, hang);
      result.hogEnabledAtEnd = (await rigB.api.admin.call('GET', `/internal/webhooks/${hangId}`)).enabled === true;
      log(`timing-out receiver round ${round}: ${JSON.stringify(result)}`);
      timeoutRounds.push(result);
    }
    await rigB.stopWorker(worker);
  } finally {
    await rigB.close();
  }
  return {
    backlog: {
      hogBacklog: SETTINGS.hogBacklog,
      rounds: backlogRounds,
      othersP99Ms: medianOrNull(backlogRounds.map((round) => round.othersMs?.p99)),
    },
    timeouts: {
      timeoutMs: SETTINGS.hangTimeoutMs,
      rounds: timeoutRounds,
      othersP99Ms: medianOrNull(timeoutRounds.map((round) => round.othersMs?.p99)),
    },
  };
}

// ------------------------------------------------------------------------------------------- 4. a held horizon

interface WindowFigures {
  seconds: number;
  deliveriesPerSecond: number;
  cpuMicrosPerDelivery: CpuReading;
  deliveriesPerCpuSecond: number;
  probeMs: LatencySummary | null;
  /**
   * p99 of the worker's claim-time histogram over the window (ms): the upper
   * bound of its bucket (Infinity above the largest); null without the metric or without claims.
   */
  claimP99Ms: number | null;
}

interface HoldRound {
  unhindered: WindowFigures;
  held: WindowFigures;
  ratio: number;
  /** What the service's own gauges said at the end of the hold. */
  oldestTransactionSeconds: number | null;
  queueDeadRows: number | null;
}

interface HeldHorizonResult {
  holdSeconds: number;
  windowSeconds: number;
  claimMetric: boolean;
  rounds: HoldRound[];
  ratio: number;
  claimP99Ms: number | null;
  probeP99Ms: number | null;
}

/**
 * One hold, on a database and processes of its own: a hold leaves bloat
 * behind that autovacuum takes minutes to clear, and the next round's
 * unhindered window must not start from it.
 */
async function holdRound(): Promise<HoldRound & { claimMetric: boolean }> {
  const rig = await startRig('horizon');
  try {
    const [bursts] = await subscribe(rig, 'burst', PER_ORGANISER);
    const [probe] = await subscribe(rig, 'probe', 1);
    const worker = await rig.startWorker();
    // Bursts back to back until told to stop: confirmations at BENCH_CONFIRM_CONCURRENCY, then every arrival.
    let stop = false;
    let burstsRun = 0;
    const loop = (async () => {
      while (!stop) {
        const target = rig.arrivals.count('burst') + SETTINGS.burstOrders * PER_ORGANISER;
        await confirmMany(rig, [bursts!], SETTINGS.burstOrders, null);
        await waitUntil(() => rig.arrivals.count('burst') >= target, 300_000, 'a burst to arrive');
        burstsRun += 1;
      }
    })();
    // Its failure is awaited below; until then it must not count as unhandled.
    loop.catch(() => undefined);
    const claimBuckets = async (): Promise<Buckets | null> =>
      histogramBuckets(await metricsText(worker.adminUrl, rig.adminToken), CLAIM_HISTOGRAM);
    /** Throughput, CPU, paced probes and claim time over the next `seconds`. */
    const window = async (seconds: number): Promise<WindowFigures> => {
      const claimsBefore = await claimBuckets();
      const countBefore = rig.arrivals.count('burst');
      const probesBefore = rig.arrivals.count('probe');
      const cpuBefore = cpuReading(rig);
      const start = performance.now();
      const probesSent = await paced(rig, [probe!], PROBE_RATE, seconds);
      await sleep(Math.max(0, start + seconds * 1000 - performance.now()));
      const elapsed = (performance.now() - start) / 1000;
      const delivered = rig.arrivals.count('burst') - countBefore;
      const cpu = cpuPerDelivery(cpuBefore, cpuReading(rig), delivered);
      const claimsAfter = await claimBuckets();
      await arrived(rig, 'probe', probesBefore + probesSent, 30_000);
      const claimP99 = claimsAfter === null ? null : histogramQuantile(claimsBefore, claimsAfter, 0.99);
      return {
        seconds: round1(elapsed),
        deliveriesPerSecond: Math.round(delivered / elapsed),
        cpuMicrosPerDelivery: cpu,
        deliveriesPerCpuSecond: perCore(cpu),
        probeMs: latencySummary(rig.arrivals.takeLatencies('probe', start)),
        claimP99Ms: claimP99 === null ? null : claimP99 * 1000,
      };
    };
    try {
      // Unmeasured: the first burst compiles the code paths, as in the webhook-delivery bench.
      await waitUntil(() => burstsRun >= 1, 300_000, 'the first burst');
      const unhindered = await window(HOLD_WINDOW_SECONDS);
      const holder = new Client({ connectionString: rig.databaseUrl });
      await holder.connect();
      try {
        // A snapshot taken by reading a row and kept: no row version deleted after it can be vacuumed away.
        await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await holder.query('SELECT id FROM "order" LIMIT 1');
        const holdStart = performance.now();
        await sleep((SETTINGS.holdSeconds - HOLD_WINDOW_SECONDS) * 1000);
        const held = await window(Math.max(1, SETTINGS.holdSeconds - (performance.now() - holdStart) / 1000));
        const gauges = await metricsText(rig.api.adminUrl, rig.adminToken);
        const oldest = metricValue(gauges, 'db_oldest_transaction_seconds');
        await holder.query('COMMIT');
        return {
          unhindered,
          held,
          ratio: ratio(held.deliveriesPerSecond, unhindered.deliveriesPerSecond),
          oldestTransactionSeconds: oldest === null ? null : round1(oldest),
          queueDeadRows: metricValue(gauges, 'webhook_queue_dead_rows'),
          claimMetric: held.claimP99Ms !== null || (await claimBuckets()) !== null,
        };
      } finally {
        await holder.end();
      }
    } finally {
      stop = true;
      await loop;
    }
  } finally {
    await rig.close();
  }
}

async function heldHorizon(): Promise<HeldHorizonResult> {
  const rounds: HoldRound[] = [];
  let claimMetric = false;
  for (let round = 1; round <= SETTINGS.rounds; round += 1) {
    const { claimMetric: exposed, ...result } = await holdRound();
    claimMetric ||= exposed;
    log(`held horizon round ${round}: ${JSON.stringify(result)}`);
    rounds.push(result);
  }
  return {
    holdSeconds: SETTINGS.holdSeconds,
    windowSeconds: HOLD_WINDOW_SECONDS,
    claimMetric,
    rounds,
    ratio: Math.round(median(rounds.map((round) => round.ratio)) * 100) / 100,
    claimP99Ms: medianOrNull(rounds.map((round) => round.held.claimP99Ms ?? undefined)),
    probeP99Ms: medianOrNull(rounds.map((round) => round.held.probeMs?.p99)),
  };
}

// ------------------------------------------------------------------------------------------------ the report

interface Results {
  /** Scenarios that stopped with an error (the others still run and report). */
  failed: Array<{ scenario: string; error: string }>;
  emptyQueue?: EmptyQueueResult;
  millionPending?: MillionPendingResult;
  hogging?: HoggingResult;
  heldHorizon?: HeldHorizonResult;
}

const fmt = (value: number | null | undefined, unit = ''): string =>
  value === null || value === undefined ? '–' : `${value}${unit}`;
const claimCell = (ms: number | null): string => {
  if (ms === null) return '–';
  return ms === Infinity ? 'above the largest bucket' : `≤ ${ms}`;
};
const latencyCells = (summary: LatencySummary | null | undefined): string =>
  summary === null || summary === undefined ? '– | –' : `${summary.p50} | ${summary.p99}`;

function deliveryTargets(results: Results): Target[] {
  const list: Target[] = [];
  const { emptyQueue: empty, millionPending: pending, hogging, heldHorizon: held } = results;
  if (empty !== undefined) {
    list.push({
      what: 'empty queue: signed deliveries/s, first confirmation to last arrival',
      value: `${empty.deliveriesPerSecond}/s`,
      goal: '≥ 3000/s',
      met: empty.deliveriesPerSecond >= 3000,
    });
    const cpu = empty.cpuMicrosPerDelivery.service + empty.cpuMicrosPerDelivery.postgres;
    list.push({
      what: 'empty queue: service + PostgreSQL CPU per delivery',
      value: `${cpu} µs`,
      goal: '≤ 450 µs',
      met: cpu <= 450,
    });
  }
  if (pending !== undefined) {
    const against = empty?.deliveriesPerSecond;
    const rate = pending.deliveriesPerSecond;
    const drainRatio = against === undefined || rate === null ? null : ratio(rate, against);
    let value = `${rate}/s of ${against}/s = ${drainRatio}×`;
    if (rate === null) {
      value =
        'not measured: the backlog ran out before any window (raise BENCH_BACKLOG_ORDERS or lower BENCH_DRAIN_WARMUP_SECONDS)';
    } else if (against === undefined) {
      value = `${rate}/s (not compared: the empty-queue scenario did not run)`;
    }
    list.push({
      what: `a million pending: drain rate against the empty queue's`,
      value,
      goal: '≥ 0.8×',
      met: drainRatio !== null && drainRatio >= 0.8,
    });
    const last = pending.rounds.map((round) => round.rss).filter((rss): rss is Flatness => rss !== null);
    list.push({
      what: 'a million pending: worker RSS flat over the window (last within 10% of first, after warm-up)',
      value:
        last.length === 0
          ? 'not measured'
          : last.map((rss) => `${rss.firstMiB} → ${rss.lastMiB} MiB`).join(', ') + ` (median ${pending.rssChange})`,
      goal: '|last / first − 1| ≤ 0.1',
      met: last.length > 0 && last.every((rss) => rss.flat),
    });
  }
  if (hogging !== undefined) {
    for (const [what, part] of [
      [`a subscription with ${hogging.backlog.hogBacklog} waiting`, hogging.backlog],
      [`a receiver that never answers (timeout ${hogging.timeouts.timeoutMs} ms)`, hogging.timeouts],
    ] as const) {
      const missing = part.rounds.reduce((sum, round) => sum + round.othersMissing, 0);
      list.push({
        what: `hogging subscriber, ${what}: the others' confirmation → arrival p99 at ${PACED_RATE}/s`,
        value: `${fmt(part.othersP99Ms, ' ms')}${missing > 0 ? ` (${missing} never arrived)` : ''}`,
        goal: '< 100 ms',
        met: part.othersP99Ms !== null && part.othersP99Ms < 100 && missing === 0,
      });
    }
  }
  if (held !== undefined) {
    list.push({
      what: `held horizon: deliveries/s in the last ${held.windowSeconds} s of a ${held.holdSeconds} s hold against unhindered`,
      value: `${held.ratio}×`,
      goal: '≥ 0.6×',
      met: held.ratio >= 0.6,
    });
    list.push({
      what: 'held horizon: claim latency p99',
      value: held.claimMetric
        ? `${claimCell(held.claimP99Ms)} ms (the upper bound of the histogram bucket it falls in)`
        : `not measured: the service exposes no ${CLAIM_HISTOGRAM} (confirmation → arrival p99 of probes during the hold: ${fmt(held.probeP99Ms, ' ms')})`,
      goal: '< 50 ms',
      // A bucket bound of 50 ms says every claim up to the p99 took at most 50 ms: as close as the histogram can tell.
      met: held.claimP99Ms !== null && held.claimP99Ms <= 50,
    });
  }
  for (const failure of results.failed) {
    list.push({
      what: `${failure.scenario}: measured`,
      value: `stopped: ${failure.error}`,
      goal: 'no error',
      met: false,
    });
  }
  return list;
}

function markdown(results: Results, loadAtStart: number): string {
  const out: string[] = [];
  out.push(
    `## Deliveries (medians of ${SETTINGS.rounds} runs; load average ${loadAtStart.toFixed(1)} at start on ${cpus().length} CPUs)`,
    '',
    'An api instance takes the confirmations, a worker process delivers; CPU is theirs and PostgreSQL’s; "per CPU-second" is deliveries per second of one core busy with them.',
    '',
  );
  const { emptyQueue: empty, millionPending: pending, hogging, heldHorizon: held } = results;
  if (empty !== undefined) {
    const cpu = empty.cpuMicrosPerDelivery;
    out.push(
      `### Empty queue: bursts of ${SETTINGS.burstOrders} confirmations to ten subscriptions`,
      '',
      '| deliveries/s | service CPU µs/delivery | PostgreSQL CPU µs/delivery | deliveries per CPU-second | confirm → arrival p50 ms | p99 ms |',
      '| --- | --- | --- | --- | --- | --- |',
      `| ${empty.deliveriesPerSecond} | ${cpu.service} | ${cpu.postgres} | ${empty.deliveriesPerCpuSecond} | ${latencyCells(empty.confirmToArrivalMs)} |`,
      '',
      `(latency: ${SETTINGS.latencyOrders} confirmations at ${PACED_RATE}/s to one subscription)`,
      '',
    );
  }
  if (pending !== undefined) {
    out.push(
      `### A million pending: ${pending.backlog.toLocaleString('en')} deliveries over ${pending.subscriptions} subscriptions, made in ${pending.backlogSeconds} s with no worker (service reported ${fmt(pending.pendingReported)} pending), then a worker`,
      '',
      '| round | pending at start | window s | deliveries/s | service CPU µs/delivery | PostgreSQL CPU µs/delivery | per CPU-second | worker RSS first → last MiB | probe p50 ms | probe p99 ms |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...pending.rounds.map(
        (round, i) =>
          `| ${i + 1} | ${round.pendingAtStart} | ${round.windowSeconds}${round.ranOut ? ' (ran out)' : ''} | ${round.deliveriesPerSecond} | ${round.cpuMicrosPerDelivery.service} | ${round.cpuMicrosPerDelivery.postgres} | ${round.deliveriesPerCpuSecond} | ${round.rss === null ? '–' : `${round.rss.firstMiB} → ${round.rss.lastMiB}`} | ${latencyCells(round.probeMs)} |`,
      ),
      '',
      `(after ${SETTINGS.drainWarmupSeconds} s of warm-up per round${pending.unmeasured > 0 ? `; ${pending.unmeasured} round(s) not measured: the backlog ran out during the warm-up` : ''})`,
      '',
    );
  }
  if (hogging !== undefined) {
    out.push(
      `### A hogging subscriber: ten other subscriptions at ${PACED_RATE} confirmations/s for ${SETTINGS.fairSeconds} s (after ${SETTINGS.warmupSeconds} s unmeasured)`,
      '',
      '| beside | round | others p50 ms | others p99 ms | others never arrived | hog |',
      '| --- | --- | --- | --- | --- | --- |',
      ...hogging.backlog.rounds.map(
        (round, i) =>
          `| ${hogging.backlog.hogBacklog} waiting | ${i + 1} | ${latencyCells(round.othersMs)} | ${round.othersMissing} | ${round.hogDelivered} delivered, ${fmt(round.hogWaitingAtEnd)} still waiting |`,
      ),
      ...hogging.timeouts.rounds.map(
        (round, i) =>
          `| never answers | ${i + 1} | ${latencyCells(round.othersMs)} | ${round.othersMissing} | ${round.hogDelivered} attempts, ${round.hogEnabledAtEnd === true ? 'still enabled' : 'disabled'} at the end |`,
      ),
      '',
    );
  }
  if (held !== undefined) {
    out.push(
      `### A held horizon: one REPEATABLE READ snapshot held ${held.holdSeconds} s while bursts run; its last ${held.windowSeconds} s against the ${held.windowSeconds} s before it`,
      '',
      '| round | window | deliveries/s | service CPU µs/delivery | PostgreSQL CPU µs/delivery | per CPU-second | probe p50 ms | probe p99 ms | claim p99 ms |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...held.rounds.flatMap((round, i) =>
        (
          [
            ['unhindered', round.unhindered],
            ['held', round.held],
          ] as const
        ).map(
          ([name, figures]) =>
            `| ${i + 1} | ${name} | ${figures.deliveriesPerSecond} | ${figures.cpuMicrosPerDelivery.service} | ${figures.cpuMicrosPerDelivery.postgres} | ${figures.deliveriesPerCpuSecond} | ${latencyCells(figures.probeMs)} | ${claimCell(figures.claimP99Ms)} |`,
        ),
      ),
      '',
      `At the end of each hold the service reported: ${held.rounds
        .map(
          (round) =>
            `oldest transaction ${fmt(round.oldestTransactionSeconds, ' s')}, ${fmt(round.queueDeadRows)} dead rows in the queue`,
        )
        .join('; ')}.`,
      '',
    );
    if (!held.claimMetric) {
      out.push(
        `Claim latency needs the metric \`${CLAIM_HISTOGRAM}\` (a histogram on the worker's /internal/metrics); until the service has it, the probes' confirmation → arrival stands in.`,
        '',
      );
    }
  }
  out.push('### Targets', '', markdownTargets(deliveryTargets(results)), '');
  return out.join('\n');
}

const SCENARIOS: Array<{ name: string; run: (results: Results) => Promise<void> }> = [
  { name: 'empty queue', run: async (results) => void (results.emptyQueue = await emptyQueue()) },
  { name: 'a million pending', run: async (results) => void (results.millionPending = await millionPending()) },
  { name: 'a hogging subscriber', run: async (results) => void (results.hogging = await hoggingSubscriber()) },
  { name: 'a held horizon', run: async (results) => void (results.heldHorizon = await heldHorizon()) },
];

export async function main(): Promise<void> {
  const loadAtStart = loadAverageAtStart(log);
  const chosen = SCENARIOS.filter(
    (scenario) => SCENARIO_FILTER.length === 0 || SCENARIO_FILTER.some((part) => scenario.name.includes(part)),
  );
  if (chosen.length === 0)
    throw new Error(`BENCH_DELIVERY_SCENARIOS matches none of: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const results: Results = { failed: [] };
  for (const scenario of chosen) {
    log(`${scenario.name}`);
    try {
      await scenario.run(results);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`${scenario.name} stopped: ${error instanceof Error ? (error.stack ?? message) : message}`);
      results.failed.push({ scenario: scenario.name, error: message.split('\n')[0] ?? message });
    }
  }
  const report = {
    benchmark: 'deliveries',
    at: new Date().toISOString(),
    machine: machineReport(loadAtStart),
    settings: { ...SETTINGS, pacedRate: PACED_RATE, probeRate: PROBE_RATE, holdWindowSeconds: HOLD_WINDOW_SECONDS },
    scenarios: chosen.map((scenario) => scenario.name),
    ...results,
    targets: deliveryTargets(results),
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'deliveries.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${markdown(results, loadAtStart)}\n`);
  // A missed target never fails the run; a scenario that could not measure does.
  if (results.failed.length > 0) throw new Error(`${results.failed.length} scenario(s) stopped with an error`);
}

runWhenExecuted(module, main);
