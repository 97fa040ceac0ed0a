import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { startService, type RunningService } from '../../src/bootstrap';
import { loadAppConfig } from '../../src/config/app-config';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/database/embedded-postgres';
import { ensureDatabase } from '../../src/database/ensure-database';
import { loopbackSettings } from '../../test/support/test-service';

export interface BenchEnvironment {
  database: EmbeddedDatabase;
  databaseUrl: string;
  service: RunningService;
  adminToken: string;
  close(): Promise<void>;
}

export interface BenchDatabase {
  database: EmbeddedDatabase;
  databaseUrl: string;
  /** The throwaway folder holding the cluster (and anything else a benchmark keeps beside it). */
  folder: string;
}

/** A throwaway embedded PostgreSQL with the real schema (migrated), seeded by `seed` and analysed. */
export async function benchDatabase(seed: (db: DataSource) => Promise<void>): Promise<BenchDatabase> {
  const folder = mkdtempSync(join(tmpdir(), 'events-api-bench-'));
  const database = await startEmbeddedPostgres({
    directory: join(folder, 'pg'),
    persistent: false,
    log: () => undefined,
  });
  await ensureDatabase(database.adminUrl, 'bench');
  const databaseUrl = database.urlFor('bench');
  const db = new DataSource({ ...dataSourceOptions(databaseUrl), entities: [] });
  await db.initialize();
  await db.runMigrations();
  await seed(db);
  await db.query('ANALYZE');
  await db.destroy();
  return { database, databaseUrl, folder };
}

/**
 * A throwaway embedded PostgreSQL, migrated, with the real service on
 * loopback in front of it (in this process). `seed` runs before the service starts.
 */
export async function benchEnvironment(
  seed: (db: DataSource) => Promise<void>,
  env: Record<string, string> = {},
): Promise<BenchEnvironment> {
  const { database, databaseUrl } = await benchDatabase(seed);
  // ADMIN_TOKEN must be at least 32 characters.
  const adminToken = 'bench-admin-token-0123456789abcdef';
  const config = loadAppConfig({
    ...loopbackSettings(databaseUrl, adminToken),
    // Benchmarks measure serving, not an account's budget.
    RATE_LIMIT_READS: '10000000',
    RATE_LIMIT_WRITES: '10000000',
    ...env,
  });
  const service = await startService(config, pino({ level: 'silent' }));
  return {
    database,
    databaseUrl,
    service,
    adminToken,
    async close() {
      await service.close();
      await database.stop();
    },
  };
}

export interface LatencySummary {
  requests: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  perSecond: number;
}

/** Runs `request` `count` times with `concurrency` in flight and summarises the latencies. */
export async function measure(
  count: number,
  concurrency: number,
  request: () => Promise<void>,
): Promise<LatencySummary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const t0 = performance.now();
        await request();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 100) / 100;
  return {
    requests: latencies.length,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
    p99Ms: at(0.99),
    perSecond: Math.round((latencies.length / elapsed) * 1000),
  };
}

/** Runs a benchmark's `main` when its file is executed directly (not when the runner imports it). */
export function runWhenExecuted(module: NodeJS.Module, main: () => Promise<unknown>): void {
  if (require.main !== module) return;
  // Exit explicitly: a benchmark is a whole process, and stray handles must not keep it alive.
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
