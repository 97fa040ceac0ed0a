import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { databaseClient } from './support/database-client';
import { assertErrorBody } from './support/error-body';
import { eventually } from './support/eventually';
import { fixtures } from './support/fixtures';
import { publicApi } from './support/http-client';
import { startServiceProcess } from './support/service-process';
import { freshDatabase } from './support/test-database';
import { loopbackSettings, startTestService, type TestService } from './support/test-service';
import { withApp } from './support/with-app';

/**
 * A TCP relay on loopback in front of the run's PostgreSQL that can stop
 * answering, as a database behind a broken network or a stuck server does:
 * it then drops the connections it relays, and accepts new ones but never
 * says a word on them.
 */
interface SilencingRelay {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  silence(): void;
  /**
   * Keeps the connections it relays open but passes nothing more back from
   * the server, as a network that drops packets on an open connection
   * does, and answers no new one; `unmute` relays new connections again.
   */
  mute(): void;
  unmute(): void;
  close(): Promise<void>;
}

async function silencingRelay(databaseUrl: string): Promise<SilencingRelay> {
  const target = new URL(databaseUrl);
  // The run's server is reached through its socket folder (the URL's host) and port, as libpq names them.
  const socketPath = join(decodeURIComponent(target.hostname), `.s.PGSQL.${target.port}`);
  let silent = false;
  const open = new Set<Socket>();
  const upstreams = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    if (silent) return;
    const upstream = connect({ path: socketPath });
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
    upstreams.add(upstream);
    upstream.on('close', () => upstreams.delete(upstream));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    silence() {
      silent = true;
      for (const socket of open) socket.destroy();
    },
    mute() {
      silent = true;
      for (const upstream of upstreams) {
        upstream.unpipe();
        upstream.on('data', () => undefined);
      }
    },
    unmute() {
      silent = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((closed) => server.close(closed));
    },
  };
}

describe('a database that accepts connections but never answers', () => {
  it('stops the start from hanging in silence: it says within DB_CONNECT_TIMEOUT_SECONDS that the connection timed out, and keeps retrying', async () => {
    // Connections are accepted and left unread: the service's start-up message is never answered.
    const accepted = new Set<Socket>();
    const mute = createServer((socket) => accepted.add(socket.on('error', () => undefined)));
    await new Promise<void>((listening) => mute.listen(0, '127.0.0.1', listening));
    const port = (mute.address() as AddressInfo).port;
    // Not ready and not exited: it said why, and that it retries.
    const saidWhyAndRetries = (output: string): boolean =>
      output.includes('Connection terminated due to connection timeout') &&
      output.includes('Unable to connect to the database. Retrying');
    try {
      await assert.rejects(
        startServiceProcess(
          {
            ...loopbackSettings(`postgres://service:secret@127.0.0.1:${port}/events`, randomBytes(16).toString('hex')),
            DB_CONNECT_TIMEOUT_SECONDS: '1',
            LOG_LEVEL: 'error',
            LOG_FORMAT: 'json',
          },
          // Stops waiting once both lines are out; a start that says neither within 10 s fails the test.
          { readyTimeoutMs: 10_000, giveUpWhen: saidWhyAndRetries },
        ),
        (error: Error) => error.message.startsWith('service did not start:') && saidWhyAndRetries(error.message),
      );
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise((closed) => mute.close(closed));
    }
  });

  /**
   * A service whose database is reached through a relay the test can
   * silence or mute. The account budget's counter is in the database too:
   * counted in memory here, so that a request reaches its own statement.
   */
  function behindRelay(
    env: Record<string, string>,
    scopes: Array<'events:read' | 'events:write'> = ['events:read'],
  ): { relay: SilencingRelay; service: TestService; key: string } {
    const state = {} as { relay: SilencingRelay; service: TestService; key: string };
    before(async () => {
      state.relay = await silencingRelay(await freshDatabase());
      state.service = await startTestService({ ...env, RATE_LIMIT_STORE: 'memory' }, { databaseUrl: state.relay.url });
      state.key = (await fixtures(state.service).organiser({ scopes })).key;
    });
    after(async () => {
      await state.relay?.close();
      await state.service?.close();
    });
    return state;
  }

  /**
   * A read while the database does not answer: the error body, after the
   * one-second bound and well before 5 s. A 503 with `Retry-After` when no
   * connection could be had (nothing was sent); a 500 when a statement was
   * sent and its answer never came.
   */
  async function failsWithinTheBound(state: { service: TestService; key: string }, status: 500 | 503): Promise<void> {
    const sentAt = performance.now();
    const answer = await publicApi(state.service)('GET', '/v1/events', { key: state.key });
    const tookMs = performance.now() - sentAt;
    assertErrorBody(answer, status, 'internal');
    assert.equal(answer.headers.get('retry-after'), status === 503 ? '5' : null);
    assert.ok(tookMs >= 900 && tookMs < 5_000, `answered after ${Math.round(tookMs)} ms`);
  }

  describe('once the service runs', () => {
    const state = behindRelay({ DB_CONNECT_TIMEOUT_SECONDS: '1' });

    it('answers a request 503 with Retry-After within DB_CONNECT_TIMEOUT_SECONDS when the database stops answering new connections, instead of holding it', async () => {
      const api = publicApi(state.service);
      assert.equal(
        (await api('GET', '/v1/events', { key: state.key })).status,
        200,
        'served while the database answers',
      );
      state.relay.silence();
      // The pool's connections were dropped with the relay's: the pool lets them go, and the next
      // statement needs a new connection, whose start-up is never answered.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await failsWithinTheBound(state, 503);
    });
  });

  describe('once the service runs, on a connection that stays open', () => {
    const state = behindRelay({ DB_CONNECT_TIMEOUT_SECONDS: '1', DB_STATEMENT_TIMEOUT_SECONDS: '1' });

    it('answers within DB_STATEMENT_TIMEOUT_SECONDS when the database goes silent on an open connection, and never lends that connection again', async () => {
      const api = publicApi(state.service);
      assert.equal(
        (await api('GET', '/v1/events', { key: state.key })).status,
        200,
        'served while the database answers',
      );
      state.relay.mute();
      await failsWithinTheBound(state, 500);
      // Connections that waited in vain are closed: once the network is back, new ones serve.
      state.relay.unmute();
      let served = false;
      for (let attempt = 0; attempt < 30 && !served; attempt += 1) {
        served = (await api('GET', '/v1/events', { key: state.key })).status === 200;
      }
      assert.ok(served, 'served again once the database answers on new connections');
    });
  });
  describe('a write, once the service runs, on connections that stay open', () => {
    const state = behindRelay({ DB_CONNECT_TIMEOUT_SECONDS: '1', DB_STATEMENT_TIMEOUT_SECONDS: '1' }, [
      'events:read',
      'events:write',
    ]);

    it('answers a write within DB_STATEMENT_TIMEOUT_SECONDS when the database goes silent, its transaction included, stores nothing, and writes once on a retry', async () => {
      const api = publicApi(state.service);
      const create = (key: string) =>
        api('POST', '/v1/events', {
          key: state.key,
          headers: { 'Idempotency-Key': key },
          body: { title: { en: `Silent ${key}` }, startTime: '2031-05-01T19:00:00Z' },
        });
      assert.equal((await create('before-silence')).status, 201, 'written while the database answers');
      state.relay.mute();
      const sentAt = performance.now();
      // Without a bound on the transaction's own BEGIN and COMMIT, the write would wait as long as the silence.
      const answer = await Promise.race([
        create('during-silence'),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 6_000)),
      ]);
      const tookMs = performance.now() - sentAt;
      assert.ok(answer !== null, 'answered, not held');
      assertErrorBody(answer, 500, 'internal');
      assert.ok(tookMs < 5_000, `answered after ${Math.round(tookMs)} ms`);
      state.relay.unmute();
      let retried = await create('during-silence');
      for (let attempt = 0; attempt < 30 && retried.status !== 201; attempt += 1)
        retried = await create('during-silence');
      assert.equal(retried.status, 201, 'written once the database answers on new connections');
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'the silenced attempt stored nothing');
    });
  });
});

describe('a statement past DB_STATEMENT_TIMEOUT_SECONDS, waiting on a lock held elsewhere', () => {
  const app = withApp({ DB_STATEMENT_TIMEOUT_SECONDS: '1', RATE_LIMIT_STORE: 'memory' });

  it('leaves no backend waiting behind it once answered: PostgreSQL ends the statement too, so a held lock cannot pile up connections', async () => {
    const reader = await app.make.organiser({ scopes: ['events:read'] });
    const holder = await databaseClient(app.service.databaseUrl);
    const waitingBackends = async (): Promise<number> => {
      const rows = await app.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'events-api' AND wait_event_type = 'Lock'`,
      );
      return rows.rows[0]?.n ?? -1;
    };
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE event IN ACCESS EXCLUSIVE MODE');
      const answers = await Promise.all(
        Array.from({ length: 3 }, () => app.api('GET', '/v1/events', { key: reader.key })),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [500, 500, 500],
      );
      // The client gave up at 1 s; the server ends the statement a second later, the lock still held.
      await eventually(
        async () => ((await waitingBackends()) === 0 ? true : undefined),
        'the backends of the statements given up on to end',
        5_000,
      );
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });
});
