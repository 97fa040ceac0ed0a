import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DashboardSessionsService } from '../src/dashboard/dashboard-sessions.service';
import { DashboardClient, csrfOf } from './support/dashboard-client';
import { publicApi } from './support/http-client';
import { secondInstance } from './support/second-instance';
import type { TestService } from './support/test-service';
import { withApp } from './support/with-app';

const KEY_PATTERN = /svc_live_[0-9a-f]{48}/;
const ACCOUNTS = '/internal/dashboard/accounts';

interface SessionRow {
  token_hash: Buffer;
  csrf_secret: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  state: unknown;
  state_text: string;
}

/**
 * Dashboard sessions shared through PostgreSQL: two instances on one
 * database, as behind a load balancer (A from withApp, B beside it), and
 * restarts. Time is moved by ageing a session's row (every timestamp of it
 * set back by the same amount), which is what the database clock sees.
 */
describe('dashboard sessions across instances', () => {
  const a = withApp();
  let b: TestService;

  before(async () => {
    b = await secondInstance(a.service);
  });
  after(async () => {
    await b?.close();
  });

  const hashOf = (cookie: string | undefined): Buffer =>
    createHash('sha256')
      .update(cookie ?? '')
      .digest();
  const cookieOf = (client: DashboardClient): string => client.cookies.get('dashboard_session') ?? '';

  async function rowOf(client: DashboardClient): Promise<SessionRow | null> {
    const result = await a.db.query<SessionRow>(
      'SELECT *, state::text AS state_text FROM dashboard_session WHERE token_hash = $1',
      [hashOf(cookieOf(client))],
    );
    return result.rows[0] ?? null;
  }

  /** Moves the database clock forward for this one session. */
  async function age(client: DashboardClient, interval: string): Promise<void> {
    const aged = await a.db.query(
      `UPDATE dashboard_session
          SET created_at = created_at - $1::interval, last_seen_at = last_seen_at - $1::interval,
              expires_at = expires_at - $1::interval
        WHERE token_hash = $2`,
      [interval, hashOf(cookieOf(client))],
    );
    assert.equal(aged.rowCount, 1, 'the session has a row');
  }

  /** A client that sends another client's cookies to another instance, as a browser behind a balancer does. */
  function sameBrowserOn(client: DashboardClient, service: TestService): DashboardClient {
    const other = new DashboardClient(service.adminUrl);
    for (const [name, value] of client.cookies) other.cookies.set(name, value);
    return other;
  }

  async function status(client: DashboardClient, path = ACCOUNTS): Promise<number> {
    return (await client.get(path)).status;
  }

  it('opens the pages of every instance after a sign-in on one', async () => {
    const onA = new DashboardClient(a.service.adminUrl);
    await onA.signIn(a.service.adminToken);
    const onB = sameBrowserOn(onA, b);
    assert.equal(await status(onB), 200);
    assert.equal(await status(onA), 200);
  });

  it('accepts on one instance a form rendered by another: the CSRF secret lives with the session', async () => {
    const onA = new DashboardClient(a.service.adminUrl);
    const csrfFromA = await onA.signIn(a.service.adminToken);
    const onB = sameBrowserOn(onA, b);
    const created = await onB.post('/internal/dashboard/organisers', { name: 'Posted to B' }, csrfFromA);
    assert.equal(created.status, 303, created.html);
    assert.match(created.location ?? '', /^\/internal\/dashboard\/organisers\/org_/);
    const shown = await sameBrowserOn(onB, a.service).get(created.location ?? '');
    assert.equal(shown.status, 200);
    assert.match(shown.html, /Organiser Posted to B created\./, 'the message flashed on B is shown by A');
    const forged = await onB.post('/internal/dashboard/organisers', { name: 'Forged' }, `${csrfFromA.slice(0, -2)}xx`);
    assert.equal(forged.status, 403, 'a forged token is still refused');
  });

  it('accepts on one instance the sign-in form rendered by another', async () => {
    const browser = new DashboardClient(a.service.adminUrl);
    const form = await browser.get('/internal/dashboard/sign-in');
    const signedIn = await sameBrowserOn(browser, b).post(
      '/internal/dashboard/sign-in',
      { token: a.service.adminToken },
      csrfOf(form.html),
    );
    assert.equal(signedIn.status, 303, signedIn.html);
    assert.equal(signedIn.location, ACCOUNTS);
  });

  it('refuses the sign-in form with the right admin token but a missing, forged or other browser’s CSRF token: 403 and no session', async () => {
    const browser = new DashboardClient(a.service.adminUrl);
    const token = csrfOf((await browser.get('/internal/dashboard/sign-in')).html);
    const otherBrowser = new DashboardClient(a.service.adminUrl);
    const othersToken = csrfOf((await otherBrowser.get('/internal/dashboard/sign-in')).html);
    const sessions = async () => (await a.db.query('SELECT count(*)::int AS n FROM dashboard_session')).rows[0].n;
    const before = await sessions();
    for (const [what, csrf] of [
      ['no token', null],
      ['a forged token', `${token.slice(0, -2)}${token.endsWith('xx') ? 'yy' : 'xx'}`],
      ["another browser's token", othersToken],
    ] as const) {
      const refused = await browser.post('/internal/dashboard/sign-in', { token: a.service.adminToken }, csrf);
      assert.equal(refused.status, 403, what);
      assert.ok(
        !refused.headers.getSetCookie().some((line) => line.startsWith('dashboard_session=')),
        `${what}: no dashboard_session cookie`,
      );
      assert.equal(cookieOf(browser), '', what);
      assert.equal(await sessions(), before, `${what}: no session stored`);
    }
    const signedIn = await browser.post('/internal/dashboard/sign-in', { token: a.service.adminToken }, token);
    assert.equal(signedIn.status, 303, 'the same form with its own token signs in');
    assert.notEqual(cookieOf(browser), '');
  });

  it('ends the session on the first instance at once when it is signed out on the second', async () => {
    const onA = new DashboardClient(a.service.adminUrl);
    await onA.signIn(a.service.adminToken);
    const onB = sameBrowserOn(onA, b);
    const out = await onB.post('/internal/dashboard/sign-out', {}, csrfOf((await onB.get(ACCOUNTS)).html));
    assert.equal(out.status, 303);
    assert.equal(await status(onA), 303, 'the very next request on A finds no session');
    assert.equal(await rowOf(onA), null, 'the row is gone');
  });

  it('keeps a session across a restart of the instance that opened it', async () => {
    let first: TestService | undefined = await secondInstance(a.service);
    let restarted: TestService | undefined;
    try {
      const browser = new DashboardClient(first.adminUrl);
      const csrf = await browser.signIn(a.service.adminToken);
      await first.close();
      first = undefined;
      restarted = await secondInstance(a.service);
      const again = sameBrowserOn(browser, restarted);
      assert.equal(await status(again), 200);
      const created = await again.post('/internal/dashboard/organisers', { name: 'After restart' }, csrf);
      assert.equal(created.status, 303, 'a form rendered before the restart is accepted after it');
    } finally {
      await first?.close();
      await restarted?.close();
    }
  });

  it('ends a session when the service restarts with another ADMIN_TOKEN: the old token’s sessions open nothing', async () => {
    const browser = new DashboardClient(a.service.adminUrl);
    await browser.signIn(a.service.adminToken);
    const newToken = `${'n'.repeat(31)}-rotated-admin-token`;
    const rotated = await secondInstance(a.service, { ADMIN_TOKEN: newToken });
    try {
      assert.equal(await status(sameBrowserOn(browser, rotated)), 303, 'sent to the sign-in form');
      assert.equal(await status(browser), 200, 'still open where the old token is the token');
      const fresh = new DashboardClient(rotated.adminUrl);
      await fresh.signIn(newToken);
      assert.equal(await status(fresh), 200, 'a sign-in with the new token opens the pages');
      assert.equal(await status(sameBrowserOn(fresh, a.service)), 303, 'and not where the old one is the token');
    } finally {
      await rotated.close();
    }
  });

  it('refuses an expired session on every instance, and purges it', async () => {
    const onA = new DashboardClient(a.service.adminUrl);
    await onA.signIn(a.service.adminToken);
    const onB = sameBrowserOn(onA, b);
    await age(onA, '31 minutes');
    assert.equal(await status(onA), 303);
    assert.equal(await status(onB), 303);
    assert.notEqual(await rowOf(onA), null, 'refused, and left for the purge');
    const purged = await b.running.app.get(DashboardSessionsService).purgeExpired();
    assert.ok(purged >= 1, `purged ${purged}`);
    assert.equal(await rowOf(onA), null);
  });

  it('expires a session after the idle time without a request', async () => {
    const client = new DashboardClient(a.service.adminUrl);
    await client.signIn(a.service.adminToken);
    await age(client, '29 minutes 59 seconds');
    assert.equal(await status(client), 200);
    await age(client, '29 minutes 59 seconds');
    assert.equal(await status(client), 200, 'each request restarts the idle clock');
    await age(client, '30 minutes');
    assert.equal(await status(client), 303);
    assert.equal(await status(client), 303, 'an expired session stays gone');
  });

  it('ends a session at the absolute limit however busy it is', async () => {
    const client = new DashboardClient(a.service.adminUrl);
    await client.signIn(a.service.adminToken);
    // 35 steps of 20 minutes: 11 h 40 min of a session in constant use.
    for (let i = 0; i < 35; i += 1) {
      await age(client, '20 minutes');
      assert.equal(await status(client), 200, `after ${(i + 1) * 20} minutes`);
    }
    await age(client, '20 minutes');
    assert.equal(await status(client), 303);
    assert.equal(await status(sameBrowserOn(client, b)), 303);
  });

  it('knows only the tokens it issued, and forgets a destroyed one', async () => {
    const client = new DashboardClient(a.service.adminUrl);
    const csrf = await client.signIn(a.service.adminToken);
    const altered = new DashboardClient(b.adminUrl);
    altered.cookies.set('dashboard_session', `${cookieOf(client)}x`);
    assert.equal(await status(altered), 303);
    const tooLong = new DashboardClient(b.adminUrl);
    tooLong.cookies.set('dashboard_session', 'x'.repeat(500));
    assert.equal(await status(tooLong), 303);
    const stolen = sameBrowserOn(client, b);
    assert.equal((await client.post('/internal/dashboard/sign-out', {}, csrf)).status, 303);
    assert.equal(await status(stolen), 303);
  });

  it('forgets expired sessions when a new one is created', async () => {
    const first = new DashboardClient(a.service.adminUrl);
    const second = new DashboardClient(b.adminUrl);
    await first.signIn(a.service.adminToken);
    await second.signIn(a.service.adminToken);
    await age(first, '13 hours');
    await age(second, '31 minutes');
    const third = new DashboardClient(b.adminUrl);
    await third.signIn(a.service.adminToken);
    assert.equal(await rowOf(first), null);
    assert.equal(await rowOf(second), null);
    assert.notEqual(await rowOf(third), null);
    const expired = await a.db.query('SELECT count(*)::int AS n FROM dashboard_session WHERE expires_at <= now()');
    assert.equal(expired.rows[0].n, 0);
  });

  it('writes the idle clock at most every thirty seconds, judged on the database clock', async () => {
    const client = new DashboardClient(a.service.adminUrl);
    await client.signIn(a.service.adminToken);
    await age(client, '10 seconds');
    const before = await rowOf(client);
    for (let i = 0; i < 3; i += 1) assert.equal(await status(i % 2 === 0 ? client : sameBrowserOn(client, b)), 200);
    const unchanged = await rowOf(client);
    assert.deepEqual(unchanged?.last_seen_at, before?.last_seen_at, 'requests within thirty seconds write nothing');
    await age(client, '21 seconds');
    assert.equal(await status(client), 200);
    const touched = await rowOf(client);
    assert.ok(
      (touched?.last_seen_at.getTime() ?? 0) > (before?.last_seen_at.getTime() ?? Infinity),
      'a request after thirty seconds moves the idle clock',
    );
  });

  it('stores no cookie value and no value shown once in plaintext, and shows the value on another instance', async () => {
    const organiser = await a.make.organiser();
    const accountPath = `/internal/dashboard/organisers/${organiser.id}`;
    const onA = new DashboardClient(a.service.adminUrl);
    const csrf = await onA.signIn(a.service.adminToken);
    const cookie = cookieOf(onA);
    const minted = await onA.post(`${accountPath}/keys`, { actorRole: 'owner' }, csrf);
    assert.equal(minted.status, 303);

    const row = await rowOf(onA);
    assert.ok(row, 'the session has a row, found by the hash of its cookie');
    const everything = JSON.stringify((await a.db.query('SELECT *, state::text FROM dashboard_session')).rows);
    assert.equal(everything.includes(cookie), false, 'no cookie value is stored');
    assert.doesNotMatch(everything, /svc_live_/, 'no key is stored in plaintext');
    assert.match(row.state_text, new RegExp(`${accountPath}/keys/key_[^/"]+/created`), 'the sealed value is kept');

    const onB = sameBrowserOn(onA, b);
    const shown = await onB.get(minted.location ?? '');
    assert.equal(shown.status, 200);
    const key = KEY_PATTERN.exec(shown.html)?.[0] ?? '';
    assert.equal((await publicApi(a.service)('GET', '/v1/me', { key })).status, 200, 'B opened what A sealed');
    assert.doesNotMatch((await onA.get(minted.location ?? '')).html, KEY_PATTERN, 'and A shows it no more');
    assert.doesNotMatch((await rowOf(onA))?.state_text ?? '', /created/, 'the row keeps it no more');
  });

  it('shows a value kept for one page to only one of two requests of that page sent at once, on two instances', async () => {
    const organiser = await a.make.organiser();
    const accountPath = `/internal/dashboard/organisers/${organiser.id}`;
    for (let round = 0; round < 3; round += 1) {
      const onA = new DashboardClient(a.service.adminUrl);
      const minted = await onA.post(
        `${accountPath}/keys`,
        { actorRole: 'owner' },
        await onA.signIn(a.service.adminToken),
      );
      assert.equal(minted.status, 303);
      const pages = await Promise.all([
        onA.get(minted.location ?? ''),
        sameBrowserOn(onA, b).get(minted.location ?? ''),
        onA.get(minted.location ?? ''),
      ]);
      assert.deepEqual(
        pages.map((page) => page.status),
        [200, 200, 200],
      );
      assert.equal(pages.filter((page) => KEY_PATTERN.test(page.html)).length, 1, `round ${round}`);
    }
  });

  it('says on another instance that a session signed out or expired has ended, and returns there to the page asked for', async () => {
    // Signed out on A from another tab that still had the page open: this tab keeps sending the cookie to B.
    const signedOut = new DashboardClient(a.service.adminUrl);
    const csrf = await signedOut.signIn(a.service.adminToken);
    assert.equal(
      (await sameBrowserOn(signedOut, a.service).post('/internal/dashboard/sign-out', {}, csrf)).status,
      303,
    );
    const expired = new DashboardClient(a.service.adminUrl);
    await expired.signIn(a.service.adminToken);
    await age(expired, '31 minutes');
    const page = `${ACCOUNTS}?q=elsewhere`;
    for (const [what, browser] of [
      ['signed out on A', signedOut],
      ['expired', expired],
    ] as const) {
      const onB = sameBrowserOn(browser, b);
      const sent = await onB.get(page);
      assert.equal(sent.status, 303, what);
      const to = new URL(sent.location ?? '', b.adminUrl);
      assert.deepEqual(
        [to.pathname, to.searchParams.get('next'), to.searchParams.get('why')],
        ['/internal/dashboard/sign-in', page, 'session-ended'],
        what,
      );
      const form = await onB.get(sent.location ?? '');
      assert.match(form.html, /Your session ended; sign in again to go on\./, what);
      const signedIn = await onB.post(
        '/internal/dashboard/sign-in',
        { token: a.service.adminToken, next: page },
        csrfOf(form.html),
      );
      assert.equal(signedIn.location, page, what);
    }
  });
});
