import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { OPS_COMMANDS } from '../src/ops/ops-commands';
import { freshDatabase } from './support/test-database';
import { ops as runOps, opsEnvFor, runOpsProcess, type OpsResult } from './support/ops-cli';
import { withApp } from './support/with-app';

describe('npm run ops (the CLI shares the domain services)', () => {
  const app = withApp();
  let env: Record<string, string>;

  // The commands run in this process, each in an application context of its own as the CLI builds it.
  const ops = (...args: string[]): Promise<OpsResult> => runOps(args, env);

  before(() => {
    env = opsEnvFor(app.service);
  });

  it('runs as its own process: JSON on stdout, exit code 0, the row stored', async () => {
    // The one subprocess of the suite: the compiled binary, its start-up and its output as a user sees them.
    const created = await runOpsProcess(['organisers:create', '--name', 'Process Org'], { ...process.env, ...env });
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.json.data.name, 'Process Org');
    const listed = await ops('organisers:list');
    assert.ok(listed.json.data.some((organiser: { id: string }) => organiser.id === created.json.data.id));
  });

  it('lists every venue, oldest first, each as venues:create answered it', async () => {
    const first = await ops('venues:create', '--name', 'Listed Hall', '--json', '{"locations":[{"city":"Lyon"}]}');
    const second = await ops('venues:create', '--name', 'Listed Annex');
    assert.equal(second.code, 0, second.stderr);
    const listed = await ops('venues:list');
    assert.equal(listed.code, 0, listed.stderr);
    const ids = (listed.json.data as Array<{ id: string }>).map((venue) => venue.id);
    const [firstAt, secondAt] = [ids.indexOf(first.json.data.id), ids.indexOf(second.json.data.id)];
    assert.ok(firstAt >= 0 && secondAt > firstAt, 'both listed, the older first');
    assert.deepEqual(listed.json.data[firstAt], first.json.data);
    assert.deepEqual(listed.json.data[secondAt], second.json.data);
    const flag = await ops('venues:list', '--name', 'Listed Hall');
    assert.equal(flag.code, 2, 'venues:list takes no flag');
  });

  it('creates organisers, mints, lists and revokes keys, and never lists a secret', async () => {
    const organiser = await ops('organisers:create', '--name', 'CLI Org');
    assert.equal(organiser.code, 0, organiser.stderr);
    const organiserId = organiser.json.data.id as string;
    const minted = await ops(
      'keys:create',
      '--organiser',
      organiserId,
      '--role',
      'owner',
      '--scopes',
      'events:read,events:write',
    );
    assert.equal(minted.code, 0, minted.stderr);
    assert.match(minted.json.data.key, /^svc_live_[0-9a-f]{48}$/);
    assert.deepEqual(minted.json.data.scopes, ['events:read', 'events:write']);

    const listed = await ops('keys:list', '--organiser', organiserId);
    assert.equal(listed.json.data.length, 1);
    assert.ok(!JSON.stringify(listed.json).includes(minted.json.data.key.slice(9)), 'keys:list never prints a secret');

    const revoked = await ops('keys:revoke', '--key', minted.json.data.id, '--role', 'org_manager');
    assert.deepEqual(revoked.json.data, { id: minted.json.data.id, revoked: true });
    const after = await ops('keys:list', '--organiser', organiserId);
    assert.ok(after.json.data[0].revokedAt !== null);
  });

  it('creates venues, publishes events and confirms orders through the same services', async () => {
    const venue = await ops('venues:create', '--name', 'CLI Hall', '--json', '{"locations":[{"city":"Berlin"}]}');
    assert.equal(venue.code, 0, venue.stderr);
    assert.equal(venue.json.data.locations.length, 1);
    const organiser = await ops('organisers:create', '--name', 'Publishing Org');
    const event = await app.make.event(organiser.json.data.id);
    const order = await app.make.order(event.id, { status: 'pending' });
    const published = await ops('events:publish', '--event', event.id);
    assert.equal(published.code, 0, published.stderr);
    assert.equal(published.json.data.visibility, 'public');
    const confirmed = await ops('orders:confirm', '--order', order.id);
    assert.equal(confirmed.json.data.status, 'confirmed');
    const missing = await ops('orders:confirm', '--order', 'ord_missing');
    assert.equal(missing.json.error, 'not_found');
  });

  it('validates venues:create as POST /internal/venues does: a time zone that is not IANA, or no name, is refused and stores nothing', async () => {
    const before = await app.db.query('SELECT count(*)::int AS n FROM venue');
    const badZone = await ops(
      'venues:create',
      '--name',
      'Mars Hall',
      '--json',
      '{"locations":[{"timeZone":"Mars/Olympus"}]}',
    );
    assert.equal(badZone.code, 1, badZone.stderr);
    assert.equal(badZone.json.error, 'invalid_argument');
    assert.match(badZone.json.message, /timeZone/);
    const noName = await ops('venues:create', '--json', '{"description":"plain"}');
    assert.equal(noName.code, 1);
    assert.equal(noName.json.error, 'invalid_argument');
    for (const json of ['null', '[1]', '"x"']) {
      const notAnObject = await ops('venues:create', '--name', 'X', '--json', json);
      assert.equal(notAnObject.code, 2, json);
      assert.match(notAnObject.stderr, /--json must be a JSON object/);
    }
    const after = await app.db.query('SELECT count(*)::int AS n FROM venue');
    assert.equal(after.rows[0].n, before.rows[0].n, 'nothing stored');
  });

  it('adds a location to a venue and soft-deletes it, as the internal API does: the venue shows it, then no longer', async () => {
    const venue = await ops('venues:create', '--name', 'Growing Hall');
    const venueId = venue.json.data.id as string;
    const added = await ops(
      'locations:create',
      '--venue',
      venueId,
      '--json',
      '{"city":"Hamburg","timeZone":"Europe/Berlin"}',
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.json.data.city, 'Hamburg');
    assert.equal(added.json.data.timeZone, 'Europe/Berlin');
    const listed = async (): Promise<string[]> => {
      const venues = (await ops('venues:list')).json.data as Array<{ id: string; locations: Array<{ id: string }> }>;
      return (venues.find((candidate) => candidate.id === venueId)?.locations ?? []).map((location) => location.id);
    };
    assert.deepEqual(await listed(), [added.json.data.id]);
    const deleted = await ops('locations:delete', '--venue', venueId, '--location', added.json.data.id);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(deleted.json.data, { id: added.json.data.id, deleted: true });
    assert.deepEqual(await listed(), [], 'omitted from the venue from then on');
    const again = await ops('locations:delete', '--venue', venueId, '--location', added.json.data.id);
    assert.equal(again.code, 1);
    assert.equal(again.json.error, 'not_found');
  });

  it('validates locations:create as POST /internal/venues/{venueId}/locations does: a time zone that is not IANA, or an unknown venue, is refused and stores nothing', async () => {
    const venue = await ops('venues:create', '--name', 'Careful Hall');
    const before = await app.db.query('SELECT count(*)::int AS n FROM venue_location');
    const badZone = await ops(
      'locations:create',
      '--venue',
      venue.json.data.id,
      '--json',
      '{"timeZone":"Mars/Olympus"}',
    );
    assert.equal(badZone.code, 1, badZone.stderr);
    assert.equal(badZone.json.error, 'invalid_argument');
    assert.match(badZone.json.message, /timeZone/);
    const unknownVenue = await ops('locations:create', '--venue', 'ven_missing', '--json', '{"city":"Nowhere"}');
    assert.equal(unknownVenue.code, 1, unknownVenue.stderr);
    assert.equal(unknownVenue.json.error, 'not_found');
    const notAnObject = await ops('locations:create', '--venue', venue.json.data.id, '--json', '[1]');
    assert.equal(notAnObject.code, 2);
    assert.match(
      notAnObject.stderr,
      /--json must be a JSON object, the body of POST \/internal\/venues\/\{venueId\}\/locations/,
    );
    const noVenue = await ops('locations:create', '--json', '{}');
    assert.equal(noVenue.code, 2);
    assert.match(noVenue.stderr, /--venue/);
    const after = await app.db.query('SELECT count(*)::int AS n FROM venue_location');
    assert.equal(after.rows[0].n, before.rows[0].n, 'nothing stored');
  });

  it('applies no migration: on a database whose schema is behind this build it refuses at once, without retrying, in one plain line naming what is not applied, and changes nothing', async () => {
    const databaseUrl = await freshDatabase();
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        'SELECT name FROM schema_migration ORDER BY timestamp DESC LIMIT 1',
      );
      const newest = rows[0]?.name ?? assert.fail('the database has its migrations');
      // As a database looks to this build while instances of the build before it still serve it.
      await client.query('DELETE FROM schema_migration WHERE name = $1', [newest]);
      // At the default log level, as a person runs it: the refusal is said once, in its plain line.
      const refused = await runOpsProcess(['organisers:list'], {
        ...process.env,
        ...env,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'info',
      });
      assert.equal(refused.code, 1, refused.stderr);
      assert.doesNotMatch(refused.stderr, /"context":"ExceptionHandler"/, 'no JSON line saying it a second time');
      assert.equal(refused.json, undefined, 'nothing on stdout');
      // No retry makes the schema catch up: the refusal is said at the first try, not after TypeORM's retries.
      assert.doesNotMatch(refused.stderr, /Retrying/);
      assert.ok(
        refused.stderr.includes(
          `the database's schema is behind this build: 1 migration(s) not applied (${newest}). Start the service of this build first`,
        ),
        refused.stderr,
      );
      const after = await client.query('SELECT count(*)::int AS n FROM schema_migration WHERE name = $1', [newest]);
      assert.equal(after.rows[0].n, 0, 'the migration was not applied');
    } finally {
      await client.end();
    }
  });

  it('is documented whole: docs/operations.md lists every command the CLI has, and no other, in the order help prints them', () => {
    const operations = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const documented = new Set(
      [...operations.matchAll(/^npm run ops -- ([a-z-]+:[a-z-]+)/gm)].map((match) => match[1]),
    );
    assert.deepEqual([...documented], Object.keys(OPS_COMMANDS));
  });

  it('validates organisers:create as POST /internal/organisers does: a name over 500 characters is refused and stores nothing', async () => {
    const before = await app.db.query('SELECT count(*)::int AS n FROM organiser');
    const long = await ops('organisers:create', '--name', 'n'.repeat(501));
    assert.equal(long.code, 1, long.stderr);
    assert.equal(long.json.error, 'invalid_argument');
    assert.match(long.json.message, /name must be shorter than or equal to 500 characters/);
    const after = await app.db.query('SELECT count(*)::int AS n FROM organiser');
    assert.equal(after.rows[0].n, before.rows[0].n, 'nothing stored');
  });

  it('refuses a flag a command does not take, and an on/off flag given anything but true or false', async () => {
    const typo = await ops('organisers:create', '--name', 'Typo Org', '--bogus', '1');
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown flag --bogus/);
    const organiser = await ops('organisers:create', '--name', 'Switch Org', '--placeholder', 'true');
    assert.equal(organiser.json.data.placeholder, true);
    const readOnly = await ops('portal:link', '--account', organiser.json.data.id, '--read-only');
    assert.equal(readOnly.json.data.readOnly, true);
    const yes = await ops('portal:link', '--account', organiser.json.data.id, '--read-only', 'yes');
    assert.equal(yes.code, 2, 'never a full-access link when a read-only one was meant');
    assert.match(yes.stderr, /--read-only is on or off/);
    const off = await ops('portal:link', '--account', organiser.json.data.id, '--read-only', 'false');
    assert.equal(off.json.data.readOnly, false);
  });

  it('names an unknown command before the usage, exiting 2 without starting anything', async () => {
    const unknown = await runOpsProcess(['bogus:cmd'], { ...process.env, ...env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^unknown command: bogus:cmd\nusage:\n/);
    assert.doesNotMatch(unknown.stderr, / $/m, 'no usage line ends in a space');
    assert.equal(unknown.json, undefined, 'nothing on stdout');
  });

  it('applies the same rules as the internal API and exits non-zero with the error code', async () => {
    const organiser = await ops('organisers:create', '--name', 'Rules Org');
    const refused = await ops('keys:create', '--organiser', organiser.json.data.id, '--role', 'viewer');
    assert.equal(refused.code, 1);
    assert.equal(refused.json.error, 'forbidden');
    const usage = await ops('keys:create', '--role', 'owner');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--organiser/);
  });

  it('refuses a stray word as a usage error, exiting 2 with the command’s usage before starting anything', async () => {
    const stray = await runOpsProcess(['organisers:list', 'stray'], { ...process.env, ...env });
    assert.equal(stray.code, 2, stray.stderr);
    assert.equal(stray.stderr, 'organisers:list: unexpected argument "stray"\nusage: npm run ops -- organisers:list\n');
    assert.equal(stray.json, undefined, 'nothing on stdout');
  });

  it('names the flag that was typed, not the HTTP body’s field, when --grace-seconds, --ttl or --json is refused', async () => {
    const grace = await ops('webhooks:rotate-secret', '--webhook', 'wh_missing', '--grace-seconds', '999999');
    assert.equal(grace.code, 1, grace.stderr);
    assert.deepEqual(grace.json, {
      error: 'invalid_argument',
      message: '--grace-seconds must be a whole number from 0 to 604800.',
    });
    const organiser = await ops('organisers:create', '--name', 'Flag Words Org');
    const ttl = await ops('portal:link', '--account', organiser.json.data.id, '--ttl', '10');
    assert.equal(ttl.code, 1, ttl.stderr);
    assert.deepEqual(ttl.json, { error: 'invalid_argument', message: '--ttl must be a whole number from 60 to 3600.' });
    const notANumber = await ops('portal:link', '--account', organiser.json.data.id, '--ttl', 'soon');
    assert.equal(notANumber.code, 2);
    assert.match(notANumber.stderr, /^portal:link: --ttl must be a whole number from 60 to 3600\.\n/);
    const json = await ops('venues:create', '--name', 'Bad JSON Hall', '--json', '{bad');
    assert.equal(json.code, 2);
    assert.match(json.stderr, /^venues:create: --json must be valid JSON: \S/);
  });

  it('names an absolute DATA_DIR as it is when there is no embedded database in it', async () => {
    const missing = await runOpsProcess(['organisers:list'], {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: '/nonexistent/events-api-data',
      LOG_LEVEL: 'silent',
    });
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /\(it reads \/nonexistent\/events-api-data\)/);
  });
});
