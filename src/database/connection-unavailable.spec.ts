import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freshDatabase } from '../../test/support/test-database';
import { connectionUnavailableError } from '../../test/support/connection-unavailable-error';
import { afterCommit, FailedAfterCommit, isConnectionUnavailable, MarkingPool } from './connection-unavailable';

/** A loopback port that accepts connections and never answers, as a stuck server does. */
async function silentServer(): Promise<{ server: Server; close(): Promise<void> }> {
  const accepted = new Set<Socket>();
  const server = createServer((socket) => accepted.add(socket));
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    server,
    close: async () => {
      for (const socket of accepted) socket.destroy();
      await new Promise((closed) => server.close(closed));
    },
  };
}

describe('a connection the pool could not lend', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  let databaseUrl: string;

  before(async () => {
    silent = await silentServer();
    databaseUrl = await freshDatabase();
  });
  after(async () => {
    await silent.close();
  });

  it('marks the error of a server that never answers a new connection, through query as through connect', async () => {
    const { port } = silent.server.address() as AddressInfo;
    const pool = new MarkingPool({ host: '127.0.0.1', port, connectionTimeoutMillis: 200 });
    try {
      await assert.rejects(pool.query('SELECT 1'), (error: Error) => {
        assert.match(error.message, /timeout/);
        return isConnectionUnavailable(error);
      });
      await assert.rejects(pool.connect(), (error: Error) => isConnectionUnavailable(error));
    } finally {
      await pool.end();
    }
  });

  it('marks the error of waiting past the bound for a connection of a full pool, and nothing once one is lent', async () => {
    const pool = new MarkingPool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 200 });
    try {
      const held = await pool.connect();
      try {
        await assert.rejects(pool.query('SELECT 1'), (error: Error) => {
          assert.equal(error.message, 'timeout exceeded when trying to connect');
          return isConnectionUnavailable(error);
        });
      } finally {
        held.release();
      }
      // Sent, a statement's own failure says nothing about whether the database could be reached.
      await assert.rejects(pool.query('SELECT * FROM no_such_table'), (error: Error) => {
        assert.match(error.message, /no_such_table/);
        return !isConnectionUnavailable(error);
      });
      assert.deepEqual((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('is recognised when the marked error is the cause of another', async () => {
    const { port } = silent.server.address() as AddressInfo;
    const pool = new MarkingPool({ host: '127.0.0.1', port, connectionTimeoutMillis: 100 });
    try {
      const cause = await pool.connect().then(
        () => assert.fail('connected to a server that never answers'),
        (error: unknown) => error,
      );
      assert.ok(isConnectionUnavailable(new Error('the work failed', { cause })));
      assert.ok(!isConnectionUnavailable(new Error('the work failed', { cause: new Error('another') })));
    } finally {
      await pool.end();
    }
  });

  it('is no longer one after a commit of the same request: afterCommit wraps it, and lets every other error through', async () => {
    const unavailable = await connectionUnavailableError();
    await assert.rejects(
      afterCommit(() => Promise.reject(unavailable)),
      (error: unknown) => error instanceof FailedAfterCommit && !isConnectionUnavailable(error),
    );
    const other = new Error('not found');
    await assert.rejects(
      afterCommit(() => Promise.reject(other)),
      (error: unknown) => error === other,
    );
    assert.equal(await afterCommit(() => Promise.resolve('done')), 'done');
  });
});
