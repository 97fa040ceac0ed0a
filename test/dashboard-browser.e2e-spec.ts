import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Route } from 'playwright-core';
import { chromiumMissingReason, DashboardBrowser } from './support/dashboard-browser';
import { fixtures } from './support/fixtures';
import { internalApi, publicApi } from './support/http-client';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from './support/https-receiver';
import type { TestService } from './support/test-service';
import { withApp, type App } from './support/with-app';

/** Small backoff and deadline so twenty failures take seconds; 127.0.0.0/8 is where the receiver lives. */
const DELIVERY_ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '20',
  WEBHOOK_BACKOFF_MAX_MS: '60',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_MAX_ATTEMPTS: '40',
};

/** One service with fast deliveries, the receiver it delivers to and one browser, for a describe block. */
interface BrowserRig {
  service: TestService;
  browser: DashboardBrowser;
  receiver: HttpsReceiver;
  /** Whether the receiver answers 500 (down) or 204. */
  failing: boolean;
}

/**
 * Sets up a BrowserRig for the describe block it is called in. The browser's hooks come first, so it
 * goes away before the service shuts down: a connection it still holds open would keep the service's
 * drain waiting for its whole timeout.
 */
function dashboardInABrowser(options: { failing: boolean; beforeClose?: (browser: DashboardBrowser) => void }): {
  rig: BrowserRig;
  app: App;
} {
  const rig = { failing: options.failing } as BrowserRig;
  before(async () => {
    rig.receiver = await startHttpsReceiver(() => (rig.failing ? { status: 500, body: 'down' } : { status: 204 }));
    rig.browser = await DashboardBrowser.launch();
  });
  after(async () => {
    options.beforeClose?.(rig.browser);
    await rig.browser.close();
    await rig.receiver.close();
  });
  const app = withApp(DELIVERY_ENV);
  before(() => {
    rig.service = app.service;
  });
  return { rig, app };
}

const missing = chromiumMissingReason();
if (missing !== null) process.stderr.write(`\n[dashboard] browser tests SKIPPED: ${missing}\n\n`);

/** UPDATE_SCREENSHOTS=1 copies the pages the dashboard guide shows into docs/screenshots/ (compiled to dist/test/). */
const SCREENSHOTS = join(__dirname, '..', '..', 'docs', 'screenshots');
const DOCS_SCREENSHOTS = {
  'organiser-1440': 'dashboard-organiser',
  'webhook-disabled-1440': 'dashboard-webhook',
  'key-created-375': 'dashboard-key-created-375',
};

/**
 * An operator's walk through the dashboard in a real browser, with the keyboard only: every
 * control is reached with Tab and used with Enter or Space. One service, one
 * browser; the steps run in order and share what they made.
 */
describe('dashboard in a browser', { skip: missing ?? false }, () => {
  const state: {
    organiserPath?: string;
    organiserId?: string;
    key?: string;
    webhookId?: string;
    eventId?: string;
    secret?: string;
  } = {};

  const { rig, app } = dashboardInABrowser({
    failing: true,
    beforeClose: (browser) => {
      if (browser.folder === null) return;
      writeFileSync(join(browser.folder, 'axe-report.json'), JSON.stringify(browser.axeReport, null, 2));
      process.stderr.write(`[dashboard] screenshots and axe report in ${browser.folder}\n`);
      if (process.env['UPDATE_SCREENSHOTS'] !== '1') return;
      for (const [page, shown] of Object.entries(DOCS_SCREENSHOTS)) {
        copyFileSync(join(browser.folder, `${page}.png`), join(SCREENSHOTS, `${shown}.png`));
      }
    },
  });
  let service: TestService;
  let browser: DashboardBrowser;
  let receiver: HttpsReceiver;
  before(() => {
    ({ service, browser, receiver } = rig);
  });

  const page = () => browser.page;
  const url = (path: string): string => `${service.adminUrl}${path}`;

  it('sends a visitor without a session to the sign-in form, and signs in with the admin token typed once', async () => {
    await page().goto(url('/internal/dashboard/accounts'));
    assert.equal(new URL(page().url()).pathname, '/internal/dashboard/sign-in');
    await browser.checkPage('sign-in');
    await browser.type('#token', service.adminToken);
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    assert.equal(new URL(page().url()).pathname, '/internal/dashboard/accounts');
  });

  it('creates an organiser from the accounts page', async () => {
    await browser.type('#organiser-name', 'Harbour Jazz Club');
    await browser.submitWith('#organiser-name');
    assert.match(new URL(page().url()).pathname, /^\/internal\/dashboard\/organisers\/org_/);
    state.organiserPath = new URL(page().url()).pathname;
    state.organiserId = decodeURIComponent(state.organiserPath.split('/').pop() ?? '');
    assert.match((await page().textContent('h1')) ?? '', /Harbour Jazz Club/);
    assert.match((await page().textContent('[role=status]')) ?? '', /Organiser Harbour Jazz Club created/);
  });

  it('finds the organiser by name and by id', async () => {
    await page().goto(url('/internal/dashboard/accounts'));
    await browser.type('#q', 'harbour jazz');
    await browser.submitWith('#q');
    assert.match((await page().textContent('#organisers-heading + .table-wrap')) ?? '', /Harbour Jazz Club/);
    await browser.checkPage('accounts');
    await page().goto(url(`/internal/dashboard/accounts?q=${state.organiserId}`));
    assert.match((await page().textContent('#organisers-heading + .table-wrap')) ?? '', /Harbour Jazz Club/);
  });

  it('mints a key with chosen scopes, shows it once with a copy button, and the key works on the public API', async () => {
    await page().goto(url(state.organiserPath ?? ''));
    await browser.type('#key-name', 'Box office');
    for (const scope of ['events:read', 'orders:read', 'events:write', 'webhooks:read', 'webhooks:write']) {
      await browser.press(`input[name=scopes][value="${scope}"]`, 'Space');
    }
    await browser.submitWith('form[action$="/keys"] button[type=submit]');
    assert.match((await page().textContent('.warning')) ?? '', /you will not see it again/);
    const key = await page().inputValue('#new-key');
    assert.match(key, /^svc_live_[0-9a-f]{48}$/);
    state.key = key;
    await browser.press('button[data-copy]', 'Enter');
    // A locator, not waitForFunction with a string: Playwright evaluates such a string with eval in the page,
    // which the dashboard's Content-Security-Policy (no 'unsafe-eval') refuses whenever the first check fails.
    await page().locator('.copy-status', { hasText: /\S/ }).waitFor();
    await browser.checkPage('key-created');
    const shownAt = new URL(page().url()).pathname;
    assert.match(shownAt, /\/keys\/key_[^/]+\/created$/, 'the key is shown on the page the mint redirected to');

    const me = await publicApi(service)('GET', '/v1/me', { key });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.principal.id, state.organiserId);

    await page().goto(url(state.organiserPath ?? ''));
    const keysTable = (await page().textContent('#keys-heading + .table-wrap')) ?? '';
    assert.match(keysTable, /Box office/);
    assert.doesNotMatch(keysTable, new RegExp(key), 'the list never shows the key again');
    await browser.checkPage('organiser');
  });

  it('reloads the page of a minted key without minting another or showing the key again', async () => {
    await page().goto(url(state.organiserPath ?? ''));
    const keyRows = page().locator('#keys-heading + .table-wrap tbody tr');
    assert.equal(await keyRows.count(), 1);
    await browser.submitWith('form[action$="/keys"] button[type=submit]');
    const minted = await page().inputValue('#new-key');
    const keyId = decodeURIComponent(/\/keys\/([^/]+)\/created$/.exec(new URL(page().url()).pathname)?.[1] ?? '');
    await page().reload();
    assert.match(new URL(page().url()).pathname, /\/keys\/key_[^/]+\/created$/);
    assert.equal(await page().locator('#new-key').count(), 0, 'the reload shows no key field');
    assert.doesNotMatch((await page().content()) ?? '', new RegExp(minted), 'nor the key anywhere on the page');
    assert.match((await page().textContent('.shown-once')) ?? '', /shown once, right after it was minted/);
    await browser.checkPage('key-shown-once');
    await page().goto(url(state.organiserPath ?? ''));
    assert.equal(await keyRows.count(), 2, 'the mint and its reload made one key, not two');
    const me = await publicApi(service)('GET', '/v1/me', { key: minted });
    assert.equal(me.status, 200, 'the key shown before the reload is the one that was minted');
    // Revoked again, so the steps below see the organiser with its one working key.
    const revoked = await internalApi(service)('DELETE', `/internal/keys/${keyId}`);
    assert.equal(revoked.status, 200, revoked.text);
  });

  /** Requests that reached the receiver after `since` and were acknowledged, by envelope type and data id. */
  const acknowledged = (since: number, type: string, id: string) => (requests: ReceivedRequest[]) =>
    requests.some(
      (r) =>
        r.receivedAt >= since &&
        r.body?.type === type &&
        (type === 'order.confirmed' ? r.body?.data?.orderId : r.body?.data?.eventId) === id,
    );

  async function publishedEvent(title: string): Promise<string> {
    const admin = internalApi(service);
    const created = await admin('POST', '/internal/events', {
      body: { organizerId: state.organiserId, title: { EN: title }, startTime: '2031-02-01T20:00:00Z' },
    });
    assert.equal(created.status, 201, created.text);
    const published = await admin('POST', `/internal/events/${created.body.data.id}/publish`);
    assert.equal(published.status, 200, published.text);
    return created.body.data.id as string;
  }

  it('shows a webhook created through the public API on the account, healthy', async () => {
    const created = await publicApi(service)('POST', '/v1/webhooks', {
      key: state.key,
      body: {
        url: `${receiver.origin}/hooks`,
        events: ['event.published', 'order.confirmed'],
        description: 'Box office',
      },
    });
    assert.equal(created.status, 201, created.text);
    state.webhookId = created.body.data.id;
    state.secret = created.body.data.secret;
    await page().goto(url(state.organiserPath ?? ''));
    const row = (await page().textContent('#webhooks-heading ~ .table-wrap')) ?? '';
    assert.match(row, /\/hooks/);
    assert.match(row, /healthy/);
    await browser.submitWith(`a[href$="/webhooks/${state.webhookId}"]`);
    assert.match((await page().textContent('h1')) ?? '', /Webhook to 127\.0\.0\.1/);
  });

  it('shows a failing endpoint disabled after twenty failures, and re-enabling with recovery delivers what it missed', async () => {
    const admin = internalApi(service);
    rig.failing = true;
    const missed = [await publishedEvent('Failing 1')];
    const deadline = Date.now() + 30_000;
    for (;;) {
      const detail = await admin('GET', `/internal/webhooks/${state.webhookId}`);
      if (detail.body.data.enabled === false) break;
      assert.ok(Date.now() < deadline, 'the subscription was not disabled in time');
      await new Promise((done) => setTimeout(done, 100));
    }
    missed.push(await publishedEvent('While disabled 1'), await publishedEvent('While disabled 2'));

    await page().goto(url(`/internal/dashboard/webhooks/${state.webhookId}`));
    assert.match((await page().textContent('.facts')) ?? '', /disabled/);
    assert.match((await page().textContent('#warnings-heading + ul')) ?? '', /disabled after 20 failures/);
    assert.match((await page().textContent('#delivery-log')) ?? '', /skipped/);
    await browser.checkPage('webhook-disabled');

    rig.failing = false;
    const enabledAt = Date.now();
    await browser.tabTo('#enable-recover');
    assert.equal(await page().isChecked('#enable-recover'), true, 'recovery is the default');
    await browser.submitWith('form[action$="/enable"] button');
    assert.match((await page().textContent('[role=status]')) ?? '', /Re-enabled; what it missed/);
    for (const eventId of missed) {
      await receiver.waitFor(acknowledged(enabledAt, 'event.published', eventId), 20_000);
    }
    // The log refreshes in place (htmx) from its link: the page itself is never reloaded (the marker survives).
    await page().evaluate('window.stayedOnPage = true');
    await browser.tabTo('#refresh-log');
    for (let tries = 0; tries < 50; tries += 1) {
      const shown = (await page().textContent('#delivery-log tbody')) ?? '';
      if (tries > 0 && !/skipped|pending|failed/.test(shown)) break;
      await Promise.all([
        page().waitForResponse((response) => response.url().endsWith(`/webhooks/${state.webhookId}`)),
        page().keyboard.press('Enter'),
      ]);
      await page().waitForTimeout(200);
      const focused = await page().evaluate('document.activeElement && document.activeElement.id');
      if (focused !== 'refresh-log') await browser.tabTo('#refresh-log');
    }
    assert.equal(await page().evaluate('window.stayedOnPage'), true, 'htmx swapped the log without a page load');
    const log = (await page().textContent('#delivery-log tbody')) ?? '';
    assert.doesNotMatch(log, /skipped|failed/);
    await page().reload();
    const facts = (await page().textContent('.facts')) ?? '';
    assert.match(facts, /healthy/);
    assert.doesNotMatch(facts, /Last success—/, 'the successes are in the health figures');
    await browser.checkPage('webhook');
  });

  it('resends a delivery with the same id, and rotates the secret showing the new one once, the focus on each result', async () => {
    const first = await page().getAttribute('#delivery-log tbody tr:first-child form', 'action');
    const deliveryId = decodeURIComponent(/deliveries\/([^/]+)\/resend/.exec(first ?? '')?.[1] ?? '');
    const before = receiver.requests.length;
    await browser.submitWith('#delivery-log tbody tr:first-child button');
    assert.match((await page().textContent('[role=status]')) ?? '', /being sent again/);
    // The message the action left has the keyboard focus, so a screen reader reads it as the page loads.
    await page().locator('p.flash:focus').waitFor({ timeout: 5_000 });
    await receiver.waitFor((requests) =>
      requests.slice(before).some((r) => r.headers['service-delivery'] === deliveryId),
    );

    await browser.submitWith('form[action$="/rotate-secret"] button');
    await page().locator('#new-secret:focus').waitFor({ timeout: 5_000 });
    const secret = await page().inputValue('#new-secret');
    assert.match(secret, /^whsec_[0-9a-f]{64}$/);
    assert.notEqual(secret, state.secret);
    assert.match((await page().textContent('.warning')) ?? '', /you will not see it again/);
    assert.match(new URL(page().url()).pathname, /\/webhooks\/[^/]+\/new-secret$/);
    await browser.checkPage('secret-rotated');
    state.secret = secret;
  });

  it('reloads the page of a rotated secret without rotating again or showing the secret again', async () => {
    const admin = internalApi(service);
    const before = await admin('GET', `/internal/webhooks/${state.webhookId}`);
    assert.equal(before.body.data.secret, state.secret, 'the page showed the secret that signs');
    await page().reload();
    assert.match(new URL(page().url()).pathname, /\/webhooks\/[^/]+\/new-secret$/);
    assert.equal(await page().locator('#new-secret').count(), 0, 'the reload shows no secret field');
    assert.doesNotMatch((await page().content()) ?? '', /whsec_/, 'nor the secret anywhere on the page');
    assert.match((await page().textContent('.shown-once')) ?? '', /shown once, right after the rotation/);
    await browser.checkPage('secret-shown-once');
    const after = await admin('GET', `/internal/webhooks/${state.webhookId}`);
    assert.equal(after.body.data.secret, state.secret, 'the reload rotated nothing');
    assert.deepEqual(after.body.data.secretRotation, before.body.data.secretRotation);
  });

  it('puts the focus on what a refused form needs, with the refusal beside it: the box a 0-second rotation needs ticked', async () => {
    await page().goto(url(`/internal/dashboard/webhooks/${state.webhookId}`));
    await browser.tabTo('#grace-seconds');
    await page().keyboard.press('Control+A');
    await page().keyboard.type('0');
    const logged = browser.consoleErrors.length;
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    await page().locator('#confirm-no-grace:focus').waitFor({ timeout: 5_000 });
    // The refused form is answered 400, which Chromium writes on the console as a failed load: that one is expected.
    const refusals = browser.consoleErrors.splice(logged);
    assert.ok(
      refusals.every((line) => /rotate-secret: Failed to load resource: .* 400 /.test(line)),
      refusals.join('\n'),
    );
    const describedBy = (await page().getAttribute('#confirm-no-grace', 'aria-describedby')) ?? '';
    assert.match(
      (await page().textContent(`#${describedBy}`)) ?? '',
      /With 0 seconds the current secret stops signing/,
    );
    await browser.checkPage('webhook-rotation-refused');
    const detail = await internalApi(service)('GET', `/internal/webhooks/${state.webhookId}`);
    assert.equal(detail.body.data.secret, state.secret, 'nothing rotated');
  });

  it('publishes an event from the events page (event.published arrives), and refuses one whose date mode is not fixed with the reason', async () => {
    const admin = internalApi(service);
    const fixed = await admin('POST', '/internal/events', {
      body: { organizerId: state.organiserId, title: { EN: 'Late set' }, startTime: '2031-06-01T20:00:00Z' },
    });
    assert.equal(fixed.status, 201, fixed.text);
    state.eventId = fixed.body.data.id;
    const planned = await admin('POST', '/internal/events', {
      body: {
        organizerId: state.organiserId,
        title: { EN: 'Maybe in spring' },
        startTime: '2031-04-01T20:00:00Z',
        planning: { date: { mode: 'window', from: '2031-03-01', to: '2031-05-01' } },
      },
    });
    assert.equal(planned.status, 201, planned.text);

    await page().goto(url(`${state.organiserPath}/events`));
    await browser.checkPage('events');
    await browser.submitWith(`form[action$="/events/${planned.body.data.id}/publish"] button`);
    assert.match(
      (await page().textContent('[role=alert]')) ?? '',
      /Not published: .*planning\.date\.mode is not fixed/,
    );
    const publishedAt = Date.now();
    await browser.submitWith(`form[action$="/events/${state.eventId}/publish"] button`);
    assert.match((await page().textContent('[role=status]')) ?? '', /Late set is public/);
    await receiver.waitFor(acknowledged(publishedAt, 'event.published', state.eventId ?? ''));
  });

  it('keeps a long unbroken title within a 375 px screen: in the events table and in the message after publishing it', async () => {
    const title = 'W'.repeat(300);
    const created = await internalApi(service)('POST', '/internal/events', {
      body: { organizerId: state.organiserId, title: { EN: title }, startTime: '2031-07-01T20:00:00Z' },
    });
    assert.equal(created.status, 201, created.text);
    await page().goto(url(`${state.organiserPath}/events`));
    await browser.submitWith(`form[action$="/events/${created.body.data.id}/publish"] button`);
    assert.match((await page().textContent('[role=status]')) ?? '', /W{300} is public/);
    await browser.checkPage('events-long-title');
    const titleCell = await page().locator('td.free-text', { hasText: title }).boundingBox();
    assert.ok(titleCell !== null && titleCell.width < 1000, `the title cell is ${titleCell?.width ?? 0} px wide`);
  });

  it('confirms a pending order from the orders page, and order.confirmed arrives', async () => {
    const admin = internalApi(service);
    const order = await admin('POST', '/internal/orders', {
      body: {
        eventId: state.eventId,
        lineItems: [{ quantity: 2, unitAmountMinor: 1250 }],
        totalAmountMinor: 2500,
        billingName: 'Ada',
      },
    });
    assert.equal(order.status, 201, order.text);
    await page().goto(url(`${state.organiserPath}/orders`));
    await browser.checkPage('orders');
    const confirmedAt = Date.now();
    await browser.submitWith(`form[action$="/orders/${order.body.data.id}/confirm"] button`);
    assert.match((await page().textContent('[role=status]')) ?? '', /is confirmed/);
    await receiver.waitFor(acknowledged(confirmedAt, 'order.confirmed', order.body.data.id));
    const confirmed = await publicApi(service)('GET', '/v1/orders', { key: state.key });
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.deepEqual(
      confirmed.body.data.map((o: { id: string }) => o.id),
      [order.body.data.id],
    );
  });

  it('names every “I mean it” box after its row, so each delete’s box can be told apart by ear', async () => {
    for (const list of ['events', 'orders']) {
      await page().goto(url(`${state.organiserPath}/${list}`));
      const snapshot = await page().locator('table').ariaSnapshot();
      const names = [...snapshot.matchAll(/checkbox "([^"]+)"/g)].map((match) => match[1] ?? '');
      assert.ok(names.length > 0, `${list}: no “I mean it” box`);
      for (const name of names) assert.match(name, /^I mean it: delete \S/, list);
      assert.equal(new Set(names).size, names.length, `${list}: ${names.join(' | ')}`);
    }
  });

  it('gives every control of the orders page a target of 24px or room around it (WCAG 2.2 target size)', async () => {
    const pending = await internalApi(service)('POST', '/internal/orders', {
      body: { eventId: state.eventId, lineItems: [{ quantity: 1 }], totalAmountMinor: 900, billingName: 'Kim' },
    });
    assert.equal(pending.status, 201, pending.text);
    await page().goto(url(`${state.organiserPath}/orders`));
    assert.equal(await page().locator(`form[action$="/orders/${pending.body.data.id}/confirm"]`).count(), 1);
    const violations = await browser.checkAccessibility('orders-target-size');
    assert.deepEqual(
      violations.filter((violation) => violation.id === 'target-size'),
      [],
    );
  });

  it('revokes the key after a confirmation, and the public API answers 401 from then on', async () => {
    await page().goto(url(state.organiserPath ?? ''));
    await browser.submitWith('a[href*="/revoke"]');
    await browser.checkPage('key-revoke');
    await browser.submitWith('button.danger');
    assert.match((await page().textContent('[role=status]')) ?? '', /revoked/);
    const me = await publicApi(service)('GET', '/v1/me', { key: state.key });
    assert.equal(me.status, 401);
  });

  it('shows a venue with its locations and adds one', async () => {
    await page().goto(url('/internal/dashboard/accounts'));
    await browser.type('#venue-name', 'Old Harbour Hall');
    await browser.type('#venue-location-city', 'Hamburg');
    await browser.type('#venue-location-time-zone', 'Europe/Berlin');
    await browser.submitWith('#venue-location-time-zone');
    assert.match(new URL(page().url()).pathname, /^\/internal\/dashboard\/venues\/ven_/);
    await browser.type('#location-display-name', 'Back room');
    await browser.submitWith('#location-display-name');
    const locations = (await page().textContent('#locations-heading + .table-wrap')) ?? '';
    assert.match(locations, /Hamburg/);
    assert.match(locations, /Back room/);
    await browser.checkPage('venue');
  });

  it('wraps a long webhook description without spaces in the webhook list, keeping the other columns in view', async () => {
    const owner = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const created = await publicApi(service)('POST', '/v1/webhooks', {
      key: owner.key,
      body: { url: `${receiver.origin}/hooks`, events: ['order.confirmed'], description: 'x'.repeat(200) },
    });
    assert.equal(created.status, 201, created.text);
    await page().goto(url(`/internal/dashboard/organisers/${owner.id}`));
    const list = page().locator('#webhooks-heading ~ .table-wrap');
    const overflow = await list.evaluate((element) => {
      const box = element as unknown as { scrollWidth: number; clientWidth: number };
      return box.scrollWidth - box.clientWidth;
    });
    assert.ok(overflow <= 0, `the webhook list is ${overflow}px wider than the page`);
    assert.ok(await page().getByRole('cell', { name: 'healthy' }).isVisible());
    await browser.checkPage('organiser-long-webhook-description');
  });

  /**
   * Holds every form post whose address matches `pattern` for `holdMs` after
   * the service answered it, as a slow network would: the page it was posted
   * from stays in front of the person all that time. Returns the undo.
   */
  async function slowPosts(pattern: RegExp, holdMs: number): Promise<() => Promise<void>> {
    const hold = async (route: Route): Promise<void> => {
      if (route.request().method() !== 'POST') return route.fallback();
      const response = await route.fetch({ maxRedirects: 0 });
      await new Promise((done) => setTimeout(done, holdMs));
      // A post the browser gave up on (it sent another instead) has no page left to answer.
      await route.fulfill({ response }).catch(() => undefined);
    };
    await page().route(pattern, hold);
    return () => page().unroute(pattern, hold);
  }

  it('sends a form once while its answer is on its way: a second Enter or Space mints no second key and makes no second order', async () => {
    const owner = await fixtures(service).organiser();
    const event = await fixtures(service).event(owner.id);
    const ownerPath = `/internal/dashboard/organisers/${owner.id}`;
    const count = async (sql: string, id: string): Promise<number> =>
      Number((await app.db.query<{ n: string }>(sql, [id])).rows[0]?.n);
    const keys = () => count('SELECT count(*) AS n FROM api_key WHERE principal_id = $1', owner.id);
    const orders = () => count('SELECT count(*) AS n FROM "order" WHERE event_id = $1', event.id);
    const keysBefore = await keys();
    const undo = await slowPosts(/\/organisers\/[^/]+\/(?:keys|orders)$/, 1_500);
    try {
      await page().goto(url(ownerPath));
      await browser.tabTo('form[action$="/keys"] button[type=submit]');
      await page().keyboard.press('Enter');
      await page().waitForTimeout(300);
      await page().keyboard.press('Enter');
      await page().waitForTimeout(300);
      await page().keyboard.press('Space');
      await page().locator('#new-key').waitFor();
      assert.match(await page().inputValue('#new-key'), /^svc_live_/);
      assert.equal(await keys(), keysBefore + 1, 'three presses while the mint was on its way made one key');

      await page().goto(url(`${ownerPath}/orders`));
      await browser.type('#order-event', event.id);
      await browser.tabTo('#order-status');
      await page().keyboard.type('confirmed');
      await browser.type('#order-total', '1500');
      await page().keyboard.press('Enter');
      await page().waitForTimeout(300);
      await page().keyboard.press('Enter');
      await page()
        .locator('[role=status]', { hasText: /created \(confirmed\)/ })
        .waitFor();
      assert.equal(await orders(), 1, 'two Enters while the order was on its way made one confirmed order');
    } finally {
      await undo();
    }
  });

  it('lets a form be sent again when its post was stopped before any answer came', async () => {
    const owner = await fixtures(service).organiser();
    let held: Route | null = null;
    // The first post never reaches the service: it waits until the browser's Stop ends it.
    const hold = async (route: Route): Promise<void> => {
      if (route.request().method() !== 'POST' || held !== null) return route.fallback();
      held = route;
    };
    await page().route(/\/keys$/, hold);
    try {
      await page().goto(url(`/internal/dashboard/organisers/${owner.id}`));
      await browser.tabTo('form[action$="/keys"] button[type=submit]');
      await page().keyboard.press('Enter');
      for (let waited = 0; held === null && waited < 5_000; waited += 50) await page().waitForTimeout(50);
      assert.ok(held !== null, 'the mint was posted');
      const devtools = await browser.context.newCDPSession(page());
      await devtools.send('Page.stopLoading');
      await devtools.detach();
      await (held as Route).abort().catch(() => undefined);
      await page().keyboard.press('Enter');
      await page().locator('#new-key').waitFor({ timeout: 5_000 });
    } finally {
      await page().unroute(/\/keys$/, hold);
    }
  });

  it('signs out', async () => {
    await browser.submitWith('form[action$="/sign-out"] button');
    assert.equal(new URL(page().url()).pathname, '/internal/dashboard/sign-in');
    await page().goto(url('/internal/dashboard/accounts'));
    assert.equal(new URL(page().url()).pathname, '/internal/dashboard/sign-in');
  });

  it('wrote no error to the browser console on any page', () => {
    assert.deepEqual(browser.consoleErrors, []);
  });

  it('puts the focus on the first field a refused new order marks invalid, read with its refusal, keeping what was typed', async () => {
    await page().goto(url('/internal/dashboard/sign-in'));
    await browser.type('#token', service.adminToken);
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    const orders = async (): Promise<number> =>
      Number(
        (await app.db.query<{ n: string }>('SELECT count(*) AS n FROM "order" WHERE event_id = $1', [state.eventId]))
          .rows[0]?.n,
      );
    const before = await orders();
    await page().goto(url(`${state.organiserPath}/orders`));
    await browser.type('#order-event', state.eventId ?? '');
    await browser.tabTo('#order-quantity');
    await page().keyboard.press('Control+A');
    await page().keyboard.type('two');
    await browser.type('#order-total', '1500');
    await browser.type('#order-currency', 'e1r');
    const logged = browser.consoleErrors.length;
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    await page().locator('#order-quantity:focus').waitFor({ timeout: 5_000 });
    const describedBy = (await page().getAttribute('#order-quantity', 'aria-describedby')) ?? '';
    assert.equal((await page().textContent(`#${describedBy}`)) ?? '', 'Quantity must be an integer number.');
    assert.equal(await page().getAttribute('#order-currency', 'aria-invalid'), 'true');
    assert.deepEqual(
      [
        await page().inputValue('#order-event'),
        await page().inputValue('#order-quantity'),
        await page().inputValue('#order-total'),
        await page().inputValue('#order-currency'),
      ],
      [state.eventId, 'two', '1500', 'e1r'],
      'what was typed is still there',
    );
    await browser.checkPage('orders-refused');

    // Mended, the quantity is accepted: the focus goes on to the field still refused.
    await page().keyboard.press('Control+A');
    await page().keyboard.type('2');
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    await page().locator('#order-currency:focus').waitFor({ timeout: 5_000 });
    assert.equal(await page().getAttribute('#order-quantity', 'aria-invalid'), null);
    assert.equal(await orders(), before, 'nothing made while refused');
    // Each refused form is answered 400, which Chromium writes on the console as a failed load: those are expected.
    const refusals = browser.consoleErrors.splice(logged);
    assert.ok(
      refusals.length > 0 && refusals.every((line) => /\/orders: Failed to load resource: .* 400 /.test(line)),
      refusals.join('\n'),
    );

    await page().keyboard.press('Control+A');
    await page().keyboard.type('EUR');
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    assert.match((await page().textContent('[role=status]')) ?? '', /created \(pending\)/);
    await page().reload();
    assert.equal(await orders(), before + 1, 'one order made, and the reload after it posts nothing');
    assert.deepEqual(browser.consoleErrors.splice(logged), []);
  });
});

/** The operator's place and what a screen reader hears of it, on a service and browser of its own. */
describe('dashboard in a browser keeps the operator’s place', { skip: missing ?? false }, () => {
  const { rig } = dashboardInABrowser({ failing: false });
  let service: TestService;
  let browser: DashboardBrowser;
  let receiver: HttpsReceiver;
  before(() => {
    ({ service, browser, receiver } = rig);
  });

  const page = () => browser.page;
  const url = (path: string): string => `${service.adminUrl}${path}`;

  async function signIn(): Promise<void> {
    await page().goto(url('/internal/dashboard/sign-in'));
    await browser.type('#token', service.adminToken);
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
  }

  it('refreshes the badge and warnings with the log, and announces the refresh politely without moving the focus', async () => {
    const owner = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const subscription = await fixtures(service).webhook(owner.key, `${receiver.origin}/hooks`, ['event.published']);
    await signIn();
    await page().goto(url(`/internal/dashboard/webhooks/${subscription.id}`));
    const badge = page().locator('.facts .badge');
    const warnings = page().locator('section[aria-labelledby="warnings-heading"]');
    assert.equal(await badge.textContent(), 'healthy');
    assert.match((await page().textContent('#delivery-log')) ?? '', /No deliveries yet/);

    // The receiver fails until the subscription is disabled (20 in a row): its badge and warnings change meanwhile.
    rig.failing = true;
    const event = await fixtures(service).event(owner.id);
    const admin = internalApi(service);
    assert.equal((await admin('POST', `/internal/events/${event.id}/publish`)).status, 200);
    await receiver.waitFor((requests) => requests.length >= 20, 30_000);
    for (let polls = 0; (await admin('GET', `/internal/webhooks/${subscription.id}`)).body.data.enabled; polls += 1) {
      assert.ok(polls < 300, 'the subscription was not disabled');
      await page().waitForTimeout(100);
    }

    await page().evaluate('window.stayedOnPage = true');
    await browser.tabTo('#refresh-log');
    await page().keyboard.press('Enter');
    await page().locator('#delivery-log tbody tr').waitFor();
    assert.equal(await page().evaluate('window.stayedOnPage'), true, 'refreshed in place, not reloaded');
    assert.equal(await badge.textContent(), 'disabled', 'the badge is as new as the log');
    assert.match((await warnings.textContent()) ?? '', /disabled after 20 failures/);
    const status = page().locator('[role=status][aria-live=polite]');
    assert.match(
      (await status.textContent()) ?? '',
      /^Log refreshed at \d{2}:\d{2}:\d{2} UTC, 1 delivery shown; health: disabled\.$/,
    );
    assert.equal(
      await page().evaluate('document.activeElement && document.activeElement.id'),
      'refresh-log',
      'the focus stays on the refresh link',
    );
    await browser.checkPage('webhook-refreshed');
  });

  /** Signs out in a second tab of the same browser, which drops the session cookie every tab shares. */
  async function signOutInAnotherTab(): Promise<void> {
    const other = await browser.context.newPage();
    try {
      await other.goto(url('/internal/dashboard/accounts'));
      await Promise.all([other.waitForNavigation(), other.locator('form[action$="/sign-out"] button').click()]);
    } finally {
      await other.close();
    }
  }

  /** On the sign-in form: says why, with the focus on the token field that reads it out; signs in and lands. */
  async function signInAgain(notice: RegExp): Promise<void> {
    assert.equal(new URL(page().url()).pathname, '/internal/dashboard/sign-in');
    assert.match((await page().textContent('#sign-in-notice')) ?? '', notice);
    await page().locator('#token:focus').waitFor();
    assert.equal(await page().getAttribute('#token', 'aria-describedby'), 'sign-in-notice');
    await page().keyboard.type(service.adminToken);
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
  }

  it('says on the sign-in form that the session ended in another tab, and returns to the page after the sign-in, never sending a form again', async () => {
    const owner = await fixtures(service).organiser({ scopes: ['webhooks:read', 'webhooks:write'] });
    const subscription = await fixtures(service).webhook(owner.key, `${receiver.origin}/hooks`, ['event.published']);
    const webhookPath = `/internal/dashboard/webhooks/${subscription.id}`;
    await page().goto(url(webhookPath));
    // Signed in by the test before, unless it ran alone.
    if (new URL(page().url()).pathname !== webhookPath) {
      await signIn();
      await page().goto(url(webhookPath));
    }

    // A refresh of the log (htmx) moves the whole page to the sign-in form.
    await signOutInAnotherTab();
    await browser.tabTo('#refresh-log');
    await Promise.all([page().waitForURL(/\/sign-in\?/), page().keyboard.press('Enter')]);
    await browser.checkPage('sign-in-session-ended');
    await signInAgain(/^Your session ended; sign in again to go on\.$/);
    assert.equal(new URL(page().url()).pathname, webhookPath, 'back on the webhook page');

    // A form sent after the session ended is not done, and not sent again after the sign-in.
    await browser.type('#recover-since', '2026-01-01T00:00:00Z');
    await signOutInAnotherTab();
    await Promise.all([page().waitForURL(/\/sign-in\?/), page().keyboard.press('Enter')]);
    await signInAgain(/^Your session ended before your form was sent, so nothing was changed/);
    assert.equal(new URL(page().url()).pathname, webhookPath, 'back on the page the form was on');
    assert.equal(await page().locator('.flash').count(), 0, 'the recovery was not sent');
  });

  it('wrote no error to the browser console on any page', () => {
    assert.deepEqual(browser.consoleErrors, []);
  });
});
