import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { loadAverageAtStart, machineReport } from './support/bench-machine';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { generateApiKey } from '../libs/keys/api-key-format';
import { freeLoopbackPort } from '../libs/net/free-port';
import { benchDatabase, runWhenExecuted } from './support/bench-environment';
import { seedEvents, seedOrders, seedOrganiser } from './support/bench-seed';
import { summariseProfile, type ProfileSummary } from './support/cpu-profile';
import { measuredRun, type LoadRequest, type RunFigures } from './support/measured-run';
import { parentPid } from './support/proc-usage';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { serviceNodeFlags } from './support/service-node-flags';
import { assertSameAnswers } from './support/same-answers';
import { scenarioData, sideBySideScenarios, type Scenario } from './support/side-by-side-scenarios';
import { markdownTable, markdownTargets, summarise, targets, type ScenarioResult } from './support/side-by-side-report';
import { measureWebhookDelivery, type WebhookDeliveryReport } from './webhook-delivery.bench';

/**
 * The service against a frameworkless peer (bench/peer: node:http + pg) over
 * one PostgreSQL holding 100,000 events and 1,000,000 confirmed orders of one
 * organiser: each scenario at 32 connections, service and peer interleaved
 * over three rounds, medians and service/peer ratios, and the speed targets
 * printed as met or not (a miss never fails the run), then the webhook
 * targets on their own service. Both servers run as child processes, so /proc
 * gives each one's CPU and memory. Settings (environment):
 *   BENCH_SCALE (1)             data size factor, e.g. 0.01 while developing
 *   BENCH_DURATION_SECONDS (10) per scenario, per server, per round
 *   BENCH_WARMUP_SECONDS (3)    per scenario and server before the rounds
 *   BENCH_ROUNDS (3)            0 skips the comparison (e.g. to profile only)
 *   BENCH_CONNECTIONS (32)
 *   BENCH_PROFILE=1             also profiles the service (node --cpu-prof) under the events-list load
 *   BENCH_PROFILE_SCENARIO=…    profiles the scenario whose name contains this instead (e.g. 'GET /v1/events/{id}')
 *   BENCH_PROFILE_PEER=1        profiles the peer under the same load too, to compare the two
 *   BENCH_WEBHOOKS=0            skips the webhook targets
 *   BENCH_SCENARIOS=…           only the scenarios whose names contain one of these comma-separated parts (while developing)
 *   BENCH_LOG_LEVEL (info)      of both servers; their output goes to log files
 *   BENCH_PEER_EXTRA_CPU_US (0) CPU the peer burns per request before serving it (bench/peer/peer-server.ts)
 * Writes bench/results/side-by-side.json (and the .cpuprofile when profiling).
 */
const setting = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
};
const SCALE = setting('BENCH_SCALE', 1);
const DURATION = setting('BENCH_DURATION_SECONDS', 10);
const WARMUP = setting('BENCH_WARMUP_SECONDS', 3);
const ROUNDS = setting('BENCH_ROUNDS', 3);
const CONNECTIONS = setting('BENCH_CONNECTIONS', 32);
const PROFILE = process.env['BENCH_PROFILE'] === '1';
const PROFILE_SCENARIO = process.env['BENCH_PROFILE_SCENARIO'];
const PROFILE_PEER = process.env['BENCH_PROFILE_PEER'] === '1';
const WEBHOOKS = process.env['BENCH_WEBHOOKS'] !== '0';
const LOG_LEVEL = process.env['BENCH_LOG_LEVEL'] ?? 'info';
const ONLY = process.env['BENCH_SCENARIOS']?.split(',').filter((part) => part !== '');

const EVENTS = Math.max(1_000, Math.round(100_000 * SCALE));
const ORDERS = Math.max(1_000, Math.round(1_000_000 * SCALE));
const LIMIT = 50;
const ORGANISER = 'org_0000000000000000sidebyside';
const PUBLIC_WEB_URL = 'http://localhost:3000';
const RESULTS = resolve(__dirname, '..', '..', 'bench', 'results');
/** What the write scenarios change: PATCH updates events, POST inserts events and idempotency keys. */
const WRITTEN_TABLES = ['event', 'idempotency_key'];

const log = (line: string): void => void process.stderr.write(`[side-by-side] ${line}\n`);

function loadOf(scenario: Scenario): () => LoadRequest {
  let n = 0;
  return () => scenario.request(n++);
}

interface ProfiledServer {
  side: 'service' | 'peer';
  script: string;
  env: () => Promise<Record<string, string>>;
  nodeFlags: string[];
}

async function profileScenario(
  server: ProfiledServer,
  folder: string,
  postmasterPid: number,
  key: string,
  scenario: Scenario,
): Promise<ProfileSummary & { file: string; run: RunFigures }> {
  const directory = join(folder, `profile-${server.side}`);
  const service = await startServerProcess({
    script: server.script,
    env: await server.env(),
    logFile: join(folder, `${server.side}-profiled.log`),
    nodeFlags: [...server.nodeFlags, '--cpu-prof', `--cpu-prof-dir=${directory}`],
  });
  const run = (seconds: number): Promise<RunFigures> =>
    measuredRun({
      url: service.url,
      serverPid: service.pid,
      postmasterPid,
      connections: CONNECTIONS,
      durationSeconds: seconds,
      authorization: `Bearer ${key}`,
      next: loadOf(scenario),
    });
  await run(Math.max(1, WARMUP));
  const fromMicros = Number(process.hrtime.bigint() / 1000n);
  const figures = await run(DURATION);
  const toMicros = Number(process.hrtime.bigint() / 1000n);
  await service.stop();
  const file = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('the profiled service wrote no .cpuprofile');
  mkdirSync(RESULTS, { recursive: true });
  const slug =
    scenario.name === 'events first page' ? 'events-list' : scenario.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  const kept = join(RESULTS, `${server.side}-${slug.replace(/^-|-$/g, '')}.cpuprofile`);
  copyFileSync(join(directory, file), kept);
  return {
    ...summariseProfile(kept, { fromMicros, toMicros }, resolve(__dirname, '..', '..')),
    file: kept,
    run: figures,
  };
}

export async function main(): Promise<void> {
  const loadAtStart = loadAverageAtStart(log);
  const key = generateApiKey();
  const seedStarted = performance.now();
  const bench = await benchDatabase(async (db) => {
    await seedOrganiser(db, ORGANISER, key, ['events:read', 'events:write', 'orders:read']);
    await seedEvents(db, ORGANISER, EVENTS);
    await seedOrders(db, ORGANISER, EVENTS, ORDERS);
  });
  const db = new Client({ connectionString: bench.databaseUrl });
  await db.connect();
  // Vacuumed once, so neither server pays for the bulk load's autovacuum and index-only scans apply.
  await db.query('VACUUM (ANALYZE) event, "order"');
  // Autovacuum would land, after the writes, in whichever run came next (service or peer, read or write);
  // the tables the writes touch are vacuumed (and a checkpoint taken) after every write run instead
  // (vacuumAfterWrites), unmeasured.
  for (const table of WRITTEN_TABLES) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  log(`seeded ${EVENTS} events and ${ORDERS} orders in ${seedSeconds} s`);
  const postmasterPid = parentPid((await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number);
  const data = await scenarioData(db, { organiserId: ORGANISER, events: EVENTS, limit: LIMIT });

  const common = {
    DATABASE_URL: bench.databaseUrl,
    PUBLIC_WEB_URL,
    RATE_LIMIT_READS: '10000000',
    RATE_LIMIT_WRITES: '10000000',
    LOG_LEVEL,
  };
  const serviceEnv = async (): Promise<Record<string, string>> => ({
    ...common,
    ADMIN_TOKEN: randomBytes(16).toString('hex'),
    ADMIN_PORT: String(await freeLoopbackPort()),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    DATA_DIR: join(bench.folder, 'service-data'),
  });
  const serviceScript = resolve(__dirname, '..', 'src', 'main.js');
  const peerScript = resolve(__dirname, 'peer', 'peer-server.js');
  const scenarios = sideBySideScenarios(data).filter(
    (scenario) => ONLY === undefined || ONLY.some((part) => scenario.name.includes(part)),
  );
  if (scenarios.length === 0) throw new Error(`no scenario's name contains one of "${ONLY?.join('", "') ?? ''}"`);
  const vacuumAfterWrites = async (scenario: Scenario): Promise<void> => {
    if (scenario.kind !== 'write') return;
    await db.query(`VACUUM (ANALYZE) ${WRITTEN_TABLES.join(', ')}`);
    // And the pages the writes and the vacuum dirtied are written out now, not by a checkpoint during a later run.
    await db.query('CHECKPOINT');
  };
  const results: ScenarioResult[] = [];
  const profiles: Array<
    ProfileSummary & { file: string; run: RunFigures; scenario: string; side: ProfiledServer['side'] }
  > = [];
  const servers: ServerProcess[] = [];
  try {
    const service = await startServerProcess({
      script: serviceScript,
      env: await serviceEnv(),
      logFile: join(bench.folder, 'service.log'),
      nodeFlags: serviceNodeFlags(),
    });
    servers.push(service);
    const peer = await startServerProcess({
      script: peerScript,
      env: common,
      logFile: join(bench.folder, 'peer.log'),
    });
    servers.push(peer);
    await assertSameAnswers(scenarios, { service: service.url, peer: peer.url }, key, data);
    log('the service and the peer give the same answers to every scenario');

    const run = async (target: ServerProcess, scenario: Scenario, seconds: number): Promise<RunFigures> => {
      const figures = await measuredRun({
        url: target.url,
        serverPid: target.pid,
        postmasterPid,
        connections: CONNECTIONS,
        durationSeconds: seconds,
        authorization: `Bearer ${key}`,
        next: loadOf(scenario),
      });
      await vacuumAfterWrites(scenario);
      return figures;
    };
    const rounds = scenarios.map((scenario) => ({ scenario, service: [] as RunFigures[], peer: [] as RunFigures[] }));
    if (ROUNDS > 0 && WARMUP > 0) {
      for (const scenario of scenarios) for (const target of [service, peer]) await run(target, scenario, WARMUP);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const entry of rounds) {
        const { scenario } = entry;
        // Alternate who goes first, so neither always runs on the other's leftovers.
        const order = round % 2 === 0 ? (['service', 'peer'] as const) : (['peer', 'service'] as const);
        for (const side of order) {
          const figures = await run(side === 'service' ? service : peer, scenario, DURATION);
          entry[side].push(figures);
          log(`round ${round + 1} ${scenario.name} ${side}: ${JSON.stringify(figures)}`);
        }
      }
    }
    if (ROUNDS > 0) {
      for (const { scenario, ...figures } of rounds) results.push(summarise(scenario.name, scenario.kind, figures));
    }
    for (const server of servers.splice(0)) await server.stop();
    if (PROFILE) {
      const chosen =
        PROFILE_SCENARIO === undefined ? scenarios[0] : scenarios.find((s) => s.name.includes(PROFILE_SCENARIO));
      if (chosen === undefined) throw new Error(`no scenario's name contains "${PROFILE_SCENARIO ?? ''}"`);
      const profiled: ProfiledServer[] = [
        { side: 'service', script: serviceScript, env: serviceEnv, nodeFlags: serviceNodeFlags() },
      ];
      if (PROFILE_PEER) profiled.push({ side: 'peer', script: peerScript, env: async () => common, nodeFlags: [] });
      for (const server of profiled) {
        const summary = await profileScenario(server, bench.folder, postmasterPid, key, chosen);
        profiles.push({ ...summary, scenario: chosen.name, side: server.side });
      }
    }
  } finally {
    for (const server of servers) await server.stop();
    await db.end();
    await bench.database.stop();
    rmSync(bench.folder, { recursive: true, force: true });
  }

  let webhooks: WebhookDeliveryReport | null = null;
  if (WEBHOOKS) {
    log(
      `webhooks: confirmations paced at 50/s, then bursts to ten subscriptions (a warm-up and ${Math.max(1, ROUNDS)} measured)`,
    );
    webhooks = await measureWebhookDelivery({
      latencyOrders: Math.max(50, Math.round(500 * Math.min(1, SCALE * 10))),
      confirmationsPerSecond: 50,
      burstOrders: Math.max(50, Math.round(1_000 * Math.min(1, SCALE * 10))),
      burstSubscriptions: 10,
      burstConcurrency: 8,
      burstRounds: Math.max(1, ROUNDS),
    });
  }

  const met = results.length > 0 || webhooks !== null ? targets(results, webhooks) : [];
  const report = {
    benchmark: 'side-by-side',
    at: new Date().toISOString(),
    machine: machineReport(loadAtStart),
    settings: {
      scale: SCALE,
      events: EVENTS,
      orders: ORDERS,
      limit: LIMIT,
      durationSeconds: DURATION,
      warmupSeconds: WARMUP,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      logLevel: LOG_LEVEL,
    },
    seedSeconds,
    scenarios: results,
    webhooks,
    targets: met,
    profiles,
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'side-by-side.json'), `${JSON.stringify(report, null, 2)}\n`);

  const out: string[] = [];
  out.push(`## Side by side: the service / the frameworkless peer (medians of ${ROUNDS} rounds)`, '');
  out.push(
    `${EVENTS.toLocaleString('en')} events, ${ORDERS.toLocaleString('en')} orders, ${CONNECTIONS} connections, ${DURATION} s per run, load average ${loadAtStart.toFixed(1)} at start on ${cpus().length} CPUs`,
    '',
  );
  if (results.length > 0) out.push(markdownTable(results), '');
  if (webhooks !== null) {
    out.push(
      `Webhooks: confirmation → arrival p50 ${webhooks.latency.confirmToArrivalMs.p50} ms, p99 ${webhooks.latency.confirmToArrivalMs.p99} ms at 50 confirmations/s (after ${webhooks.latency.coldStart.deliveries} unmeasured, the slowest of them ${webhooks.latency.coldStart.maxMs} ms); ${webhooks.throughput.deliveriesPerSecond} signed deliveries/s (${webhooks.throughput.deliveries} to ${webhooks.throughput.subscriptions} subscriptions), CPU per delivery: service ${webhooks.throughput.cpuMicrosPerDelivery.service} µs, PostgreSQL ${webhooks.throughput.cpuMicrosPerDelivery.postgres} µs, bench ${webhooks.throughput.cpuMicrosPerDelivery.bench} µs`,
      '',
    );
  }
  if (met.length > 0) out.push('### Targets', '', markdownTargets(met), '');
  for (const profile of profiles) {
    out.push(
      `### ${profile.side === 'service' ? 'Service' : 'Peer'} CPU profile under the ${profile.scenario} load (${profile.run.requests} requests, ${profile.busyMs} ms busy, ${profile.idleMs} ms idle; ${profile.file})`,
      '',
    );
    out.push('| self time | per request | share | function |', '| --- | --- | --- | --- |');
    const perRequest = (ms: number): string => `${((ms * 1000) / Math.max(1, profile.run.requests)).toFixed(1)} µs`;
    for (const entry of profile.top)
      out.push(
        `| ${entry.selfMs} ms | ${perRequest(entry.selfMs)} | ${(entry.share * 100).toFixed(1)}% | ${entry.function} |`,
      );
    out.push('');
    out.push(
      `By area: ${profile.byArea
        .slice(0, 12)
        .map((area) => `${area.area} ${(area.share * 100).toFixed(1)}%`)
        .join(', ')}`,
      '',
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

runWhenExecuted(module, main);
