import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { loadAverageAtStart, machineReport } from './support/bench-machine';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { generateApiKey } from '../libs/keys/api-key-format';
import { freeLoopbackPort } from '../libs/net/free-port';
import { benchDatabase, runWhenExecuted } from './support/bench-environment';
import { seedEvents, seedOrganiser } from './support/bench-seed';
import { measuredRun, type LoadRequest, type RunFigures } from './support/measured-run';
import { parentPid, processCpuTicks, ticksToMicros } from './support/proc-usage';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { serviceNodeFlags } from './support/service-node-flags';
import { median } from './support/median';
import { markdownTargets, type Target } from './support/side-by-side-report';
import { scenarioData, sideBySideScenarios, type Scenario } from './support/side-by-side-scenarios';
import { measureWebhookDelivery, type WebhookDeliveryReport } from './webhook-delivery.bench';

/**
 * Several instances on one PostgreSQL, on this machine's cores:
 * (a) the events list (first page, as in the side-by-side bench) through one
 *     `api` instance directly, through the round-robin proxy of the
 *     several-instances test (a process of its own) to that one instance,
 *     and through it to two `api` instances, with RATE_LIMIT_STORE=database;
 *     configurations interleaved over the rounds, medians;
 * (b) deliveries per second of a burst of confirmations fanned out to ten
 *     subscriptions (the webhook-delivery bench) with one and with two
 *     `worker` processes beside an `api` instance.
 * On two cores two instances cannot be faster than one: the targets show
 * that coordinating through PostgreSQL costs no collapse (two serve at least
 * 0.9 of one). The requests/s target compares one and two instances both
 * behind the proxy, so that the proxy's own cost (one instance directly
 * against behind it, printed too) is on both sides. Settings (environment):
 *   BENCH_SCALE (1)                    events seeded: 100,000 × scale
 *   BENCH_DURATION_SECONDS (10)        per configuration, per round
 *   BENCH_WARMUP_SECONDS (3)           per configuration before the rounds
 *   BENCH_ROUNDS (3)
 *   BENCH_CONNECTIONS (32)
 *   BENCH_WEBHOOK_BURST_ORDERS (300)   confirmations per burst, each to ten subscriptions
 *   BENCH_LOG_LEVEL (info)             of the instances; their output goes to log files
 * Writes bench/results/scale-out.json.
 */
const setting = (name: string, fallback: number, min = 0): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number of at least ${min}`);
  return value;
};
const SCALE = setting('BENCH_SCALE', 1);
const DURATION = setting('BENCH_DURATION_SECONDS', 10, 1);
const WARMUP = setting('BENCH_WARMUP_SECONDS', 3);
const ROUNDS = setting('BENCH_ROUNDS', 3, 1);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 32, 1);
const BURST_ORDERS = setting('BENCH_WEBHOOK_BURST_ORDERS', 300, 1);
const LOG_LEVEL = process.env['BENCH_LOG_LEVEL'] ?? 'info';

const EVENTS = Math.max(1_000, Math.round(100_000 * SCALE));
const LIMIT = 50;
const ORGANISER = 'org_00000000000000000scaleout';
const RESULTS = resolve(__dirname, '..', '..', 'bench', 'results');
/** Two instances behind the proxy serve at least this share of one instance's requests/s (and deliveries/s). */
const NO_COLLAPSE = 0.9;

const log = (line: string): void => void process.stderr.write(`[scale-out] ${line}\n`);

/** Where the load goes: one instance, or the proxy in front of one or two. */
interface Configuration {
  name: string;
  instances: ServerProcess[];
  /** False: the load goes to the first instance directly. */
  proxied: boolean;
}

interface ConfigurationRun extends RunFigures {
  /** CPU of the proxy process per successful request, in µs (0 without the proxy). */
  proxyCpuMicros: number;
}

interface ConfigurationResult {
  name: string;
  rounds: ConfigurationRun[];
  median: { requestsPerSecond: number; p50Ms: number; p99Ms: number } & Record<
    'serverCpuMicros' | 'postgresCpuMicros' | 'proxyCpuMicros',
    number
  >;
  failures: number;
}

/** The test rig's round-robin proxy (test/support/round-robin-proxy.ts) in a process of its own. */
let proxiesStarted = 0;
function startProxy(backends: ServerProcess[], folder: string): Promise<ServerProcess> {
  proxiesStarted += 1;
  return startServerProcess({
    script: resolve(__dirname, 'support', 'proxy-process.js'),
    env: { BACKENDS: backends.map((backend) => backend.url).join(',') },
    // A file of its own each time: readiness is read from it (`Ready in`).
    logFile: join(folder, `proxy-${proxiesStarted}.log`),
  });
}

async function listThroughput(): Promise<ConfigurationResult[]> {
  const key = generateApiKey();
  const bench = await benchDatabase(async (db) => {
    await seedOrganiser(db, ORGANISER, key, ['events:read']);
    await seedEvents(db, ORGANISER, EVENTS);
  });
  const db = new Client({ connectionString: bench.databaseUrl });
  await db.connect();
  const instances: ServerProcess[] = [];
  try {
    await db.query('VACUUM (ANALYZE) event');
    const postmasterPid = parentPid((await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    const data = await scenarioData(db, { organiserId: ORGANISER, events: EVENTS, limit: LIMIT });
    const scenario = sideBySideScenarios(data).find((candidate) => candidate.name === 'events first page');
    if (scenario === undefined) throw new Error('the side-by-side scenarios have no "events first page"');
    log(`seeded ${EVENTS} events`);
    const folder = bench.folder;

    const shared = {
      DATABASE_URL: bench.databaseUrl,
      SERVICE_ROLE: 'api',
      RATE_LIMIT_STORE: 'database',
      // Counted in PostgreSQL like any budget, but never refused: the bench measures serving.
      RATE_LIMIT_READS: '10000000',
      RATE_LIMIT_WRITES: '10000000',
      ADMIN_TOKEN: randomBytes(16).toString('hex'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      PUBLIC_WEB_URL: 'http://localhost:3000',
      LOG_LEVEL,
    };
    for (const name of ['a', 'b']) {
      instances.push(
        await startServerProcess({
          script: resolve(__dirname, '..', 'src', 'main.js'),
          env: {
            ...shared,
            ADMIN_PORT: String(await freeLoopbackPort()),
            DATA_DIR: join(bench.folder, `instance-${name}`),
          },
          logFile: join(folder, `instance-${name}.log`),
          nodeFlags: serviceNodeFlags(),
        }),
      );
    }
    const [a, b] = instances as [ServerProcess, ServerProcess];
    const configurations: Configuration[] = [
      { name: 'one instance, directly', instances: [a], proxied: false },
      { name: 'one instance behind the proxy', instances: [a], proxied: true },
      { name: 'two instances behind the proxy', instances: [a, b], proxied: true },
    ];

    const run = async (configuration: Configuration, seconds: number): Promise<ConfigurationRun> => {
      // Started for its runs only: its health checks (each a /readyz of every backend, 20 a second) load nobody else's.
      const proxy = configuration.proxied ? await startProxy(configuration.instances, folder) : null;
      try {
        const proxyBefore = proxy === null ? 0 : processCpuTicks(proxy.pid);
        const figures = await measuredRun({
          url: proxy?.url ?? a.url,
          serverPid: a.pid,
          otherServerPids: configuration.instances.slice(1).map((instance) => instance.pid),
          postmasterPid,
          connections: CONNECTIONS,
          durationSeconds: seconds,
          authorization: `Bearer ${key}`,
          next: loadOf(scenario),
        });
        const proxyTicks = proxy === null ? 0 : processCpuTicks(proxy.pid) - proxyBefore;
        const proxyCpuMicros = figures.requests === 0 ? 0 : Math.round(ticksToMicros(proxyTicks) / figures.requests);
        return { ...figures, proxyCpuMicros };
      } finally {
        await proxy?.stop();
      }
    };
    if (WARMUP > 0) for (const configuration of configurations) await run(configuration, WARMUP);
    const rounds = new Map(configurations.map((configuration) => [configuration, [] as ConfigurationRun[]]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // A different configuration goes first in each round, so none always runs on another's leftovers.
      const order = configurations.map((_, i) => configurations[(i + round) % configurations.length]!);
      for (const configuration of order) {
        const figures = await run(configuration, DURATION);
        rounds.get(configuration)!.push(figures);
        log(`round ${round + 1} ${configuration.name}: ${JSON.stringify(figures)}`);
      }
    }
    return configurations.map((configuration) => summarise(configuration.name, rounds.get(configuration)!));
  } finally {
    for (const instance of instances) await instance.stop();
    await db.end();
    await bench.database.stop();
    rmSync(bench.folder, { recursive: true, force: true });
  }
}

function loadOf(scenario: Scenario): () => LoadRequest {
  let n = 0;
  return () => scenario.request(n++);
}

function summarise(name: string, rounds: ConfigurationRun[]): ConfigurationResult {
  const of = (figure: keyof ConfigurationResult['median']): number => median(rounds.map((run) => run[figure]));
  return {
    name,
    rounds,
    median: {
      requestsPerSecond: of('requestsPerSecond'),
      p50Ms: of('p50Ms'),
      p99Ms: of('p99Ms'),
      serverCpuMicros: of('serverCpuMicros'),
      postgresCpuMicros: of('postgresCpuMicros'),
      proxyCpuMicros: of('proxyCpuMicros'),
    },
    failures: rounds.reduce((sum, run) => sum + run.failures, 0),
  };
}

/** Deliveries of the webhook-delivery bench's bursts, with `workers` worker processes beside an `api` instance. */
function deliveries(workers: number): Promise<WebhookDeliveryReport> {
  return measureWebhookDelivery({
    // The latency part is not what this bench is about: a few confirmations, one at a time.
    latencyOrders: 20,
    confirmationsPerSecond: null,
    burstOrders: BURST_ORDERS,
    burstSubscriptions: 10,
    burstConcurrency: 8,
    burstRounds: ROUNDS,
    workers,
  });
}

const ratio = (value: number, of: number): number => (of === 0 ? 0 : Math.round((value / of) * 100) / 100);

function scaleOutTargets(
  list: ConfigurationResult[],
  one: WebhookDeliveryReport,
  two: WebhookDeliveryReport,
): Target[] {
  const [, oneProxied, twoProxied] = list;
  const result: Target[] = [];
  if (oneProxied !== undefined && twoProxied !== undefined) {
    const value = ratio(twoProxied.median.requestsPerSecond, oneProxied.median.requestsPerSecond);
    result.push({
      what: 'events first page: requests/s of two api instances vs one, both behind the proxy',
      value: `${value}×`,
      goal: `≥ ${NO_COLLAPSE}×`,
      met: value >= NO_COLLAPSE,
    });
  }
  const perSecond = ratio(two.throughput.deliveriesPerSecond, one.throughput.deliveriesPerSecond);
  result.push({
    what: 'webhook deliveries/s of two worker instances vs one',
    value: `${perSecond}×`,
    goal: `≥ ${NO_COLLAPSE}×`,
    met: perSecond >= NO_COLLAPSE,
  });
  for (const configuration of list) {
    result.push({
      what: `events first page, ${configuration.name}: every answer 2xx`,
      value: `${configuration.failures} failures`,
      goal: '0',
      met: configuration.failures === 0,
    });
  }
  return result;
}

export async function main(): Promise<void> {
  const loadAtStart = loadAverageAtStart(log);
  const list = await listThroughput();
  log(`webhooks: bursts of ${BURST_ORDERS} confirmations to ten subscriptions, one worker then two`);
  const oneWorker = await deliveries(1);
  log(`one worker: ${JSON.stringify(oneWorker.throughput.rounds)}`);
  const twoWorkers = await deliveries(2);
  log(`two workers: ${JSON.stringify(twoWorkers.throughput.rounds)}`);
  const met = scaleOutTargets(list, oneWorker, twoWorkers);
  const direct = list[0]?.median.requestsPerSecond ?? 0;

  const report = {
    benchmark: 'scale-out',
    at: new Date().toISOString(),
    machine: machineReport(loadAtStart),
    settings: {
      scale: SCALE,
      events: EVENTS,
      limit: LIMIT,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      burstOrders: BURST_ORDERS,
      logLevel: LOG_LEVEL,
    },
    list,
    deliveries: { oneWorker: oneWorker.throughput, twoWorkers: twoWorkers.throughput },
    targets: met,
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'scale-out.json'), `${JSON.stringify(report, null, 2)}\n`);

  const out: string[] = [];
  out.push(`## Several instances on one PostgreSQL (medians of ${ROUNDS} rounds)`, '');
  out.push(
    `Events first page (limit ${LIMIT}) of ${EVENTS.toLocaleString('en')} events, ${CONNECTIONS} connections, ${DURATION} s per run, RATE_LIMIT_STORE=database, load average ${loadAtStart.toFixed(1)} at start on ${cpus().length} CPUs`,
    '',
    '| Configuration | requests/s (vs directly) | p50 ms | p99 ms | service CPU µs/req | PostgreSQL CPU µs/req | proxy CPU µs/req |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const { name, median: m } of list) {
    out.push(
      `| ${name} | ${m.requestsPerSecond} (${ratio(m.requestsPerSecond, direct)}×) | ${m.p50Ms} | ${m.p99Ms} | ${m.serverCpuMicros} | ${m.postgresCpuMicros} | ${m.proxyCpuMicros} |`,
    );
  }
  out.push(
    '',
    `Webhook deliveries: bursts of ${BURST_ORDERS} confirmations to ten subscriptions through an api instance`,
    '',
    '| Workers | deliveries/s | service CPU µs/delivery (all instances) | PostgreSQL CPU µs/delivery |',
    '| --- | --- | --- | --- |',
  );
  for (const [workers, report] of [
    [1, oneWorker],
    [2, twoWorkers],
  ] as const) {
    const { deliveriesPerSecond, cpuMicrosPerDelivery } = report.throughput;
    out.push(
      `| ${workers} | ${deliveriesPerSecond} | ${cpuMicrosPerDelivery.service} | ${cpuMicrosPerDelivery.postgres} |`,
    );
  }
  out.push(
    '',
    '### Targets',
    '',
    '(the requests/s target compares one and two instances both behind the proxy; the proxy’s own cost is the first two rows’ difference)',
    '',
    markdownTargets(met),
    '',
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

runWhenExecuted(module, main);
