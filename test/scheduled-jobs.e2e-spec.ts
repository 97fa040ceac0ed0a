import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Pool } from 'pg';
import { ScheduledJobs } from '../src/database/jobs/scheduled-jobs';
import { eventually, sleep } from './support/eventually';
import { secondInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

interface Run {
  instance: string;
  startedMs: number;
  endedMs: number;
}

const jobsOf = (service: TestService) => service.running.app.get(ScheduledJobs);

/**
 * Two instances (both `all`) in this process on one database, as two
 * replicas would be. A job registered on both records each run in a table:
 * which instance ran it, and when it started and ended by the database clock.
 */
describe('scheduled jobs across instances (job_lease)', () => {
  const a = withApp();
  let b: TestService;
  let bClosed = false;
  // Runs on both instances record themselves at once: a pool, not one client.
  let db: Pool;

  before(async () => {
    b = await secondInstance(a.service);
    db = new Pool({ connectionString: a.service.databaseUrl, max: 4 });
    await db.query(`CREATE TABLE test_job_run (job text, instance text, started_at timestamptz, ended_at timestamptz)`);
  });
  after(async () => {
    if (!bClosed) await b?.close();
    await db?.end();
  });

  /** Jobs registered by a test; stopped after it, so that only its own ticks load the machine. */
  let registered: Array<() => void> = [];
  afterEach(() => {
    for (const stop of registered) stop();
    registered = [];
  });

  /** Registers `job` on `services`; each run takes `runMs` and is recorded under its instance's name. */
  function register(
    job: string,
    periodMs: number,
    runMs: number,
    services: Array<[string, TestService]>,
    leaseMs?: number,
  ): void {
    for (const [instance, service] of services) {
      const stop = jobsOf(service).every(
        job,
        periodMs,
        async () => {
          // The run's start is its claim's time on the database clock (the lease row, held while it runs):
          // a busy machine delays the run's own first statement, never the claim it was given.
          const started = await db.query<{ at: Date }>('SELECT last_started_at AS at FROM job_lease WHERE name = $1', [
            job,
          ]);
          await sleep(runMs);
          await db.query(
            `INSERT INTO test_job_run (job, instance, started_at, ended_at) VALUES ($1, $2, $3, clock_timestamp())`,
            [job, instance, started.rows[0]?.at],
          );
        },
        leaseMs === undefined ? {} : { leaseMs },
      );
      registered.push(stop);
    }
  }

  async function runsOf(job: string): Promise<Run[]> {
    const rows = await db.query<{ instance: string; started_ms: number; ended_ms: number }>(
      `SELECT instance, extract(epoch FROM started_at) * 1000 AS started_ms, extract(epoch FROM ended_at) * 1000 AS ended_ms
         FROM test_job_run WHERE job = $1 ORDER BY started_at`,
      [job],
    );
    return rows.rows.map((row) => ({
      instance: row.instance,
      startedMs: Number(row.started_ms),
      endedMs: Number(row.ended_ms),
    }));
  }

  async function databaseNowMs(): Promise<number> {
    const now = await db.query<{ ms: number }>('SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms');
    return Number(now.rows[0]?.ms);
  }

  it('with two instances on one database a job runs once per period, never on both at once', async (t) => {
    const periodMs = 500;
    register('counted', periodMs, 20, [
      ['a', a.service],
      ['b', b],
    ]);
    const from = await databaseNowMs();
    await sleep(periodMs * 8);
    const until = await databaseNowMs();
    const runs = await runsOf('counted');
    // The first run is due one period after the job was first seen; then one per period (a claim is asked
    // for every tenth of a period, so a run starts at most a tenth late, plus the machine's delays).
    const periods = (until - from) / periodMs;
    const onA = runs.filter((run) => run.instance === 'a').length;
    t.diagnostic(`${runs.length} runs in ${periods.toFixed(1)} periods (${onA} on a, ${runs.length - onA} on b)`);
    assert.ok(runs.length <= Math.floor(periods), `${runs.length} runs in ${periods.toFixed(1)} periods`);
    assert.ok(runs.length >= Math.floor(periods) - 3, `${runs.length} runs in ${periods.toFixed(1)} periods`);
    for (let i = 1; i < runs.length; i += 1) {
      const gap = runs[i]!.startedMs - runs[i - 1]!.startedMs;
      // Claims a period apart on the database clock (a millisecond for the rounding of epoch milliseconds).
      assert.ok(gap >= periodMs - 1, `runs ${i - 1} and ${i} started ${gap.toFixed(0)} ms apart`);
    }
  });

  it('a run that outlasts its period and its lease is never overlapped: the lease is renewed while it runs', async () => {
    register(
      'slow',
      200,
      600,
      [
        ['a', a.service],
        ['b', b],
      ],
      300,
    );
    await sleep(3_000);
    const runs = await runsOf('slow');
    assert.ok(runs.length >= 3, `${runs.length} runs`);
    for (let i = 1; i < runs.length; i += 1) {
      assert.ok(runs[i]!.startedMs >= runs[i - 1]!.endedMs - 5, `run ${i} started before run ${i - 1} ended`);
    }
  });

  it('a lease held by an instance that died blocks the job until it runs out, then another instance takes over', async () => {
    // A holder that never gave its lease back: as if its process had been killed mid-run.
    await db.query(
      `INSERT INTO job_lease (name, holder, leased_until, last_started_at)
       VALUES ('orphaned', 'killed-instance', now() + interval '1500 milliseconds', now() - interval '1 hour')`,
    );
    const leaseEnds = (await databaseNowMs()) + 1_500;
    register('orphaned', 200, 10, [
      ['a', a.service],
      ['b', b],
    ]);
    await sleep(2_500);
    const runs = await runsOf('orphaned');
    assert.ok(runs.length >= 1, 'another instance took the job over');
    assert.ok(runs[0]!.startedMs >= leaseEnds - 50, `the first run started ${leaseEnds - runs[0]!.startedMs} ms early`);
  });

  it('when the instance that runs a job stops, the other takes over at the next period', async (t) => {
    const periodMs = 300;
    register('handover', periodMs, 10, [['b', b]]);
    await eventually(async () => ((await runsOf('handover')).length >= 2 ? true : undefined), 'two runs on b');
    register('handover', periodMs, 10, [['a', a.service]]);
    await b.close();
    bClosed = true;
    const stoppedAt = await databaseNowMs();
    await sleep(periodMs * 5);
    const later = (await runsOf('handover')).filter((run) => run.startedMs > stoppedAt);
    t.diagnostic(`${later.length} runs in the 5 periods after the holder stopped`);
    assert.ok(later.length >= 3, `${later.length} runs after the stop`);
    assert.ok(
      later.every((run) => run.instance === 'a'),
      'only the instance still running runs it',
    );
  });
});
