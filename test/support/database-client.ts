import { Client } from 'pg';

/** A direct SQL connection to a test service's database, for assertions and bulk fixtures. */
export async function databaseClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  // A suite that terminates the database's backends (health's outage tests) also ends this idle
  // connection; without a listener that 'error' would crash the test process. A later query on
  // the ended client still fails, loudly, in the test that makes it.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
