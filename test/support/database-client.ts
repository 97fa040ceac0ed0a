import { Client } from 'pg';

/** A direct SQL connection to a test service's database, for assertions and bulk fixtures. */
export async function databaseClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}
