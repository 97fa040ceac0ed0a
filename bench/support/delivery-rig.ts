import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { Client } from 'pg';
import { startServiceProcess } from '../../test/support/service-process';
import { jsonClient, type JsonClient } from './json-client';
import { parentPid, postgresCpuTicks, processCpuTicks, ticksToMicros } from './proc-usage';

/**
 * What the delivery benches share: the service as child processes (any
 * `SERVICE_ROLE`), the account that confirms orders, the CPU readings and
 * the small waiting helpers. Everything goes through the service's HTTP
 * APIs, never its tables.
 */

export interface BenchService {
  child: ChildProcess;
  /** The admin listener (internal API, metrics), with the admin token. */
  admin: JsonClient;
  api: JsonClient;
  adminUrl: string;
}

/** The service as a child process (`node dist/src/main.js`), with small JSON clients for both listeners. */
export async function startBenchService(env: Record<string, string>, nodeFlags: string[]): Promise<BenchService> {
  const running = await startServiceProcess(env, { echo: process.env['BENCH_LOG_LEVEL'] !== undefined, nodeFlags });
  return {
    child: running.child,
    admin: jsonClient(running.adminUrl, env['ADMIN_TOKEN']),
    api: jsonClient(running.publicUrl),
    adminUrl: running.adminUrl,
  };
}

export async function stopService(service: ChildProcess): Promise<void> {
  if (service.exitCode !== null || service.signalCode !== null) return;
  const exited = new Promise((done) => service.once('exit', done));
  service.kill('SIGTERM');
  await exited;
}

/**
 * The settings every process of one bench shares: one webhook key (a worker
 * opens the secrets an api instance sealed), the receiver's certificate
 * trusted, 127.0.0.0/8 allowed as a target, budgets that never refuse.
 */
export function deliveryEnv(options: {
  databaseUrl: string;
  adminToken: string;
  secretKey: string;
  certFile: string;
}): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    ADMIN_TOKEN: options.adminToken,
    WEBHOOK_SECRET_KEY: options.secretKey,
    WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: options.certFile,
    RATE_LIMIT_WRITES: '1000000',
    RATE_LIMIT_READS: '1000000',
    LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
  };
}

/** An organiser with a webhooks key and one event whose orders the bench confirms. */
export interface BenchOrganiser {
  id: string;
  key: string;
  eventId: string;
}

export async function createBenchOrganiser(admin: JsonClient, name: string): Promise<BenchOrganiser> {
  const organiser = await admin.call('POST', '/internal/organisers', { name });
  const key = (
    await admin.call('POST', '/internal/keys', {
      principal: { type: 'organiser', id: organiser.id },
      scopes: ['webhooks:read', 'webhooks:write'],
      actorRole: 'owner',
    })
  ).key as string;
  const event = await admin.call('POST', '/internal/events', {
    organizerId: organiser.id,
    title: { EN: name },
    startTime: '2030-01-01T20:00:00Z',
  });
  return { id: organiser.id as string, key, eventId: event.id as string };
}

/** A `pending` order of the organiser's event (confirm it to emit `order.confirmed`), or one created `confirmed`. */
export function createOrder(
  admin: JsonClient,
  organiser: BenchOrganiser,
  status: 'pending' | 'confirmed' = 'pending',
): Promise<{ id: string }> {
  return admin.call('POST', '/internal/orders', {
    eventId: organiser.eventId,
    status,
    lineItems: [{ quantity: 1, unitAmountMinor: 1000 }],
    totalAmountMinor: 1000,
  });
}

export async function postmasterOf(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return parentPid((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0);
  } finally {
    await client.end();
  }
}

export interface CpuReading {
  service: number;
  postgres: number;
  bench: number;
}

/** CPU used so far (µs) by the service's processes, PostgreSQL and this process. */
export function cpuSoFar(services: ChildProcess[], postmasterPid: number): CpuReading {
  const own = process.cpuUsage();
  return {
    service: ticksToMicros(services.reduce((sum, service) => sum + processCpuTicks(service.pid ?? 0), 0)),
    postgres: ticksToMicros(postgresCpuTicks(postmasterPid)),
    bench: own.user + own.system,
  };
}

/** CPU per delivery between two readings, in whole µs. */
export function cpuPerDelivery(before: CpuReading, after: CpuReading, deliveries: number): CpuReading {
  const per = (figure: keyof CpuReading): number =>
    deliveries === 0 ? 0 : Math.round((after[figure] - before[figure]) / deliveries);
  return { service: per('service'), postgres: per('postgres'), bench: per('bench') };
}

export async function pool<T>(
  items: Iterable<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  // One iterator shared by the workers: each takes the next item that nobody has taken.
  const queue = items[Symbol.iterator]();
  const next = (): IteratorResult<T> => queue.next();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let item = next(); item.done !== true; item = next()) await work(item.value);
    }),
  );
}

export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** The Prometheus text of `GET /internal/metrics` on an admin listener. */
export function metricsText(adminUrl: string, adminToken: string): Promise<string> {
  const { hostname, port } = new URL(adminUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { hostname, port, path: '/internal/metrics', headers: { authorization: `Bearer ${adminToken}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((response.statusCode ?? 0) >= 300)
            reject(new Error(`GET /internal/metrics: ${response.statusCode} ${text}`));
          else resolve(text);
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}
