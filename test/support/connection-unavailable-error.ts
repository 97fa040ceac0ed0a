import { isConnectionUnavailable, MarkingPool } from '../../src/database/connection-unavailable';

/**
 * A real error of a connection the pool could not lend (port 1 of loopback
 * refuses at once), for specs of what answers it: made by the pool that marks
 * it, not forged.
 */
export async function connectionUnavailableError(): Promise<Error> {
  const pool = new MarkingPool({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 2_000 });
  const error = await pool.connect().then(
    (client) => {
      client.release();
      return new Error('a server answered on port 1');
    },
    (refused: unknown) => refused as Error,
  );
  await pool.end();
  if (!isConnectionUnavailable(error)) throw error;
  return error;
}
