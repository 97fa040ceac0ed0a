import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startServiceProcess } from './support/service-process';
import { freshDatabase } from './support/test-database';
import { loopbackSettings } from './support/test-service';

/** TypeORM's line for each new try of the first connection. */
const RETRYING = 'Unable to connect to the database. Retrying';

/**
 * Starts the service on `databaseUrl` and returns how the start ended: what
 * it printed when it exited, or, when it began to retry instead, what it
 * printed until then (the start is stopped there, not left to retry for
 * half a minute).
 */
async function failedStart(databaseUrl: string): Promise<{ exited: boolean; output: string }> {
  try {
    const service = await startServiceProcess(
      { ...loopbackSettings(databaseUrl, randomBytes(16).toString('hex')), LOG_LEVEL: 'error', LOG_FORMAT: 'json' },
      { readyTimeoutMs: 60_000, giveUpWhen: (output) => output.includes(RETRYING) },
    );
    service.child.kill('SIGKILL');
    throw new Error(`the service started on ${databaseUrl}`);
  } catch (error) {
    const message = (error as Error).message;
    if (message.startsWith('service exited with')) return { exited: true, output: message };
    if (message.startsWith('service did not start:')) return { exited: false, output: message };
    throw error;
  }
}

/** The one plain line a failed start writes on stderr (the JSON log lines are on stdout). */
function plainLine(output: string): string | undefined {
  return output.split('\n').find((line) => line.startsWith('the service failed to start: '));
}

describe('a start whose database settings the server refuses', () => {
  it('fails at once, without retrying, on a wrong password, and its one plain line says so and why (SQLSTATE 28P01)', async () => {
    const url = new URL(await freshDatabase());
    url.password = 'not-the-password';
    const start = await failedStart(url.toString());
    assert.ok(start.exited, `it retried:\n${start.output}`);
    assert.ok(!start.output.includes(RETRYING), start.output);
    assert.match(
      plainLine(start.output) ?? start.output,
      /^the service failed to start: password authentication failed for user ".*" \(not retried: no retry fixes a wrong password, SQLSTATE 28P01; correct DATABASE_URL\)$/,
    );
  });

  it('fails at once, without retrying, on a database that does not exist, and its one plain line says so and why (SQLSTATE 3D000)', async () => {
    const url = new URL(await freshDatabase());
    url.pathname = `/missing_${randomBytes(6).toString('hex')}`;
    const start = await failedStart(url.toString());
    assert.ok(start.exited, `it retried:\n${start.output}`);
    assert.ok(!start.output.includes(RETRYING), start.output);
    assert.match(
      plainLine(start.output) ?? start.output,
      /^the service failed to start: database "missing_[0-9a-f]+" does not exist \(not retried: no retry fixes a database that does not exist, SQLSTATE 3D000; correct DATABASE_URL\)$/,
    );
  });

  it('still retries a connection that is refused, as a database that is starting refuses it', async () => {
    // A port that was free a moment ago and is closed again: nothing listens there.
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const start = await failedStart(`postgres://service:secret@127.0.0.1:${port}/events`);
    assert.ok(!start.exited, `it gave up at once:\n${start.output}`);
    assert.ok(start.output.includes('ECONNREFUSED'), start.output);
  });
});
