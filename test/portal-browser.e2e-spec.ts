import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Request } from 'playwright-core';
import { chromiumMissingReason, DashboardBrowser } from './support/dashboard-browser';
import { eventually } from './support/eventually';
import { startHttpsReceiver, type HttpsReceiver } from './support/https-receiver';
import { mintPortalLink } from './support/portal-client';
import { withApp } from './support/with-app';
import { insertFailedHistoryDeliveries } from './support/webhook-rows';

const ENV = {
  WEBHOOK_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8',
  WEBHOOK_BACKOFF_BASE_MS: '20',
  WEBHOOK_BACKOFF_MAX_MS: '40',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_MAX_ATTEMPTS: '2',
};

/** UPDATE_SCREENSHOTS=1 copies the two pages the portal guide shows into docs/screenshots/. */
const SCREENSHOTS = join(__dirname, '..', '..', 'docs', 'screenshots');

const missing = chromiumMissingReason();
if (missing !== null) process.stderr.write(`\n[portal] browser tests SKIPPED: ${missing}\n\n`);

/**
 * An account's walk through the portal in one Chromium, keyboard only (Tab
 * to a control, Enter to use it): open the link, read a failing
 * subscription's log, resend, rotate and copy the secret, reload, sign out.
 * Every page state is checked with axe-core at 1440 and 375 px.
 */
describe('webhook portal in a browser', { skip: missing ?? false }, () => {
  const app = withApp(ENV);
  let browser: DashboardBrowser;
  let receiver: HttpsReceiver;
  let link: { url: string; token: string };
  let webhookId: string;
  let ownerId: string;
  let secret: string;

  before(async () => {
    receiver = await startHttpsReceiver(() => ({ status: 503, body: '{"error":"maintenance until 18:00"}' }));
    const owner = await app.make.organiser({ name: 'Harbour Jazz Club', scopes: ['webhooks:write'] });
    ownerId = owner.id;
    webhookId = (await app.make.webhook(owner.key, `${receiver.origin}/hooks`, ['order.confirmed'])).id;
    await app.make.order((await app.make.event(owner.id)).id);
    await eventually(async () => {
      const listed = await app.admin('GET', `/internal/webhooks/${webhookId}/deliveries`);
      return (listed.body.data as Array<{ status: string }>)[0]?.status === 'failed' ? true : undefined;
    }, 'the delivery to fail');
    const minted = await mintPortalLink(app.service, owner.id);
    // The link as the account's browser reaches this service (the test's port is chosen at start).
    link = { url: `${app.service.publicUrl}/portal#token=${minted.token}`, token: minted.token };
    browser = await DashboardBrowser.launch();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.service.publicUrl });
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
  });

  const page = () => browser.page;

  it('opens the link, takes the token out of the address bar and the history, and shows the subscriptions', async () => {
    await page().goto(link.url);
    await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
    assert.doesNotMatch(page().url(), /#|token/);
    await page()
      .goBack()
      .catch(() => undefined);
    assert.doesNotMatch(page().url(), /token/, 'no history entry keeps the token');
    if (new URL(page().url()).pathname !== '/portal/subscriptions') await page().goForward();
    await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
    assert.match((await page().textContent('main')) ?? '', /failing/);
    await browser.checkPage('portal-subscriptions');
  });

  it("opens the failing subscription's delivery log with the keyboard: HTTP status and the receiver's answer", async () => {
    await browser.submitWith(`a[href="/portal/subscriptions/${webhookId}"]`);
    const text = (await page().textContent('#delivery-log')) ?? '';
    assert.match(text, /HTTP 503/);
    assert.match(text, /Response body:/);
    assert.match(text, /maintenance until 18:00/, "the receiver's answer, as recorded with the attempt");
    await browser.checkPage('portal-delivery-log');
  });

  it('refreshes the log in place', async () => {
    // Until htmx has swapped the new log in, the next test's button could be replaced under the keyboard's focus.
    const settled = page().evaluate(
      `new Promise((resolve) => document.body.addEventListener('htmx:afterSettle', () => resolve(true), { once: true }))`,
    );
    await browser.press('#refresh-log');
    await settled;
    await page().locator('#delivery-log').waitFor();
    assert.match(new URL(page().url()).pathname, /^\/portal\/subscriptions\//);
  });

  it('resends a delivery and says so after the redirect', async () => {
    await browser.submitWith('button[data-delivery]');
    assert.match((await page().textContent('[role=status]')) ?? '', /is being sent again/);
    await browser.checkPage('portal-resent');
  });

  it('moves the keyboard focus to the message an action leaves, so a screen reader reads it as the page loads', async () => {
    await page().locator('p.flash:focus').waitFor({ timeout: 5_000 });
    assert.match((await page().textContent('p.flash:focus')) ?? '', /is being sent again/);
  });

  it('rotates the secret, shows it once with the focus on it, and copies it', async () => {
    await browser.submitWith('#rotate-secret');
    assert.match(new URL(page().url()).pathname, /\/secret$/);
    await page().locator('#new-secret:focus').waitFor({ timeout: 5_000 });
    secret = (await page().inputValue('#new-secret')) ?? '';
    assert.match(secret, /^whsec_[0-9a-f]{64}$/);
    await browser.press('button[data-copy]');
    await page().locator('.copy-status', { hasText: /\S/ }).waitFor();
    await browser.checkPage('portal-secret');
  });

  it('reloads without repeating the rotation or showing the secret again', async () => {
    await page().reload();
    assert.doesNotMatch(new URL(page().url()).pathname, /\/secret$/);
    assert.doesNotMatch((await page().content()) ?? '', /whsec_/);
    assert.match((await page().textContent('[role=alert]')) ?? '', /shown once/);
    const current = await app.admin('GET', `/internal/webhooks/${webhookId}`);
    assert.equal(current.body.data.secret, secret, 'the reload rotated nothing');
    await browser.checkPage('portal-after-reload');
  });

  it('shows receivers how to verify a delivery', async () => {
    await browser.submitWith('a[href="/portal/verify"]');
    assert.match((await page().textContent('main')) ?? '', new RegExp(webhookId));
    await browser.checkPage('portal-verify');
  });

  it('signs out with the keyboard', async () => {
    await browser.submitWith('#sign-out');
    assert.equal(new URL(page().url()).pathname, '/portal/signed-out');
    await browser.checkPage('portal-signed-out');
  });

  it('wrote no error to the browser console on any page of the walk', () => {
    assert.deepEqual(browser.consoleErrors, []);
  });

  it('shows a page that says the session has ended once signed out', async () => {
    await page().goto(`${app.service.publicUrl}/portal/subscriptions`);
    assert.match((await page().textContent('main')) ?? '', /session has ended/);
    await browser.checkPage('portal-session-ended');
  });

  it('refuses the same link a second time with a page that says so', async () => {
    await page().goto(link.url);
    await page().waitForURL((url) => url.pathname === '/portal/link-refused');
    assert.match((await page().textContent('main')) ?? '', /already been opened/);
    assert.doesNotMatch(page().url(), /token/);
    await browser.checkPage('portal-link-refused');
    // Chromium reports every 4xx answer on the console: the refusals' own 401 and 410s are the only lines.
    assert.ok(
      browser.consoleErrors.every((line) => /status of (401|410)/.test(line)),
      browser.consoleErrors.join('\n'),
    );
  });

  it('opens a link given a query string and more parameters after the token in its fragment, and clears the fragment', async () => {
    const minted = await mintPortalLink(app.service, ownerId);
    await page().goto(`${app.service.publicUrl}/portal?utm_source=mail#token=${minted.token}&utm_campaign=x`);
    await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
    assert.doesNotMatch(page().url(), /#|token/);
    assert.match((await page().textContent('main')) ?? '', /failing/);
  });

  it('takes a fragment without a token out of the address bar too, and says the link is incomplete', async () => {
    await page().goto(`${app.service.publicUrl}/portal#tokn=${'x'.repeat(43)}`);
    // The script is deferred: it has run once the page has loaded, which goto waits for.
    assert.equal(new URL(page().url()).hash, '');
    assert.match((await page().textContent('#open-status')) ?? '', /carries no portal token/);
    await browser.checkPage('portal-link-without-token');
  });

  it('asks before a link replaces the session of the account already signed in, naming it, and opens the link only when told', async () => {
    await browser.context.clearCookies();
    // From another page: a link differing from the address shown only after `#` would not load the page again.
    await page().goto('about:blank');
    await page().goto(`${app.service.publicUrl}/portal#token=${(await mintPortalLink(app.service, ownerId)).token}`);
    await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
    const other = await app.make.organiser({ name: 'Quayside Theatre' });
    const otherLink = await mintPortalLink(app.service, other.id);
    await page().goto('about:blank');
    await page().goto(`${app.service.publicUrl}/portal#token=${otherLink.token}`);
    await page().waitForSelector('#open-link', { state: 'visible' });
    assert.equal(new URL(page().url()).hash, '', 'the token is out of the address bar while the page asks');
    assert.match(
      (await page().textContent('#portal-open')) ?? '',
      /signed in to the webhook portal of Harbour Jazz Club/,
    );
    assert.equal(await page().evaluate('document.activeElement && document.activeElement.id'), 'open-link');
    await browser.checkPage('portal-open-while-signed-in');
    const stillOwn = await page().request.get(`${app.service.publicUrl}/portal/subscriptions`);
    assert.equal(stillOwn.status(), 200, 'nothing was exchanged before the person said so');
    assert.match(await stillOwn.text(), /Harbour Jazz Club/);
    await page().click('#open-link');
    await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
    assert.match((await page().textContent('main')) ?? '', /Quayside Theatre/);
  });

  it('opens a link pasted into a tab already showing the portal’s page, where only the fragment changes: the token posted once, and out of the address bar and the history', async () => {
    await browser.context.clearCookies();
    await page().goto('about:blank');
    await page().goto(`${app.service.publicUrl}/portal`);
    const exchanges: string[] = [];
    const countExchange = (request: Request): void => {
      if (new URL(request.url()).pathname === '/portal/session') exchanges.push(request.method());
    };
    // What pasting a link into the address bar and pressing Enter does here: the same page, a new fragment.
    const paste = (token: string) =>
      page().evaluate(`window.location.href = ${JSON.stringify(`${app.service.publicUrl}/portal#token=${token}`)}`);
    page().on('request', countExchange);
    try {
      await paste((await mintPortalLink(app.service, ownerId)).token);
      await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
      assert.match((await page().textContent('main')) ?? '', /Harbour Jazz Club/);
      assert.deepEqual(exchanges, ['POST'], 'the token was posted once');
      await page().goBack();
      assert.equal(new URL(page().url()).pathname, '/portal');
      assert.doesNotMatch(page().url(), /#|token/, 'no history entry keeps the token');

      // Signed in now: a link pasted into the page asks first, as when it loads the page.
      await page().goto(`${app.service.publicUrl}/portal`);
      await paste((await mintPortalLink(app.service, ownerId)).token);
      await page().waitForSelector('#open-link', { state: 'visible' });
      assert.equal(new URL(page().url()).hash, '', 'the token is out of the address bar while the page asks');
      assert.equal(await page().evaluate('document.activeElement && document.activeElement.id'), 'open-link');
      assert.deepEqual(exchanges, ['POST'], 'nothing posted before the person says so');
      await page().click('#open-link');
      await page().waitForURL((url) => url.pathname === '/portal/subscriptions');
      assert.deepEqual(exchanges, ['POST', 'POST']);
    } finally {
      page().off('request', countExchange);
    }
  });

  after(() => {
    const folder = browser.folder;
    if (process.env['UPDATE_SCREENSHOTS'] !== '1' || folder === null) return;
    for (const name of ['portal-subscriptions', 'portal-delivery-log']) {
      copyFileSync(join(folder, `${name}-1440.png`), join(SCREENSHOTS, `${name}.png`));
    }
  });
});

/** What a person typed, where their focus is and what a screen reader hears, on a service and browser of their own. */
describe('webhook portal in a browser keeps what was typed and the focus', { skip: missing ?? false }, () => {
  const app = withApp(ENV);
  let browser: DashboardBrowser;
  let receiver: HttpsReceiver;
  let owner: { id: string; key: string };
  let webhookId: string;

  before(async () => {
    receiver = await startHttpsReceiver(() => ({ status: 500, body: 'down' }));
    owner = await app.make.organiser({ name: 'Pier Cinema', scopes: ['webhooks:write'] });
    webhookId = (await app.make.webhook(owner.key, `${receiver.origin}/hooks`, ['order.confirmed'])).id;
    browser = await DashboardBrowser.launch();
    const minted = await mintPortalLink(app.service, owner.id);
    await browser.page.goto(`${app.service.publicUrl}/portal#token=${minted.token}`);
    await browser.page.waitForURL((url) => url.pathname === '/portal/subscriptions');
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
  });

  const page = () => browser.page;
  const activeId = async (): Promise<unknown> => page().evaluate('document.activeElement && document.activeElement.id');

  it('shows a refused recovery window again with what was typed, the focus on the refused field and its refusal read with it', async () => {
    await page().goto(`${app.service.publicUrl}/portal/subscriptions/${webhookId}`);
    await browser.type('#recover-since', '2026-02-01 00:00:00 UTC');
    await browser.type('#recover-until', '2026-01-01 <noon>');
    await browser.submitWith('form[action$="/recover"] button[type=submit]');
    await page().locator('#recover-until:focus').waitFor({ timeout: 5_000 });
    assert.equal(await page().inputValue('#recover-since'), '2026-02-01 00:00:00 UTC');
    assert.equal(await page().inputValue('#recover-until'), '2026-01-01 <noon>');
    assert.equal(await page().getAttribute('#recover-until', 'aria-invalid'), 'true');
    const describedBy = (await page().getAttribute('#recover-until', 'aria-describedby')) ?? '';
    assert.match((await page().textContent(`#${describedBy}`)) ?? '', /Until must be an instant/);
    assert.equal(await page().locator('p.flash').count(), 0, 'nothing said at the top of the page');
    await browser.checkPage('portal-recover-refused');
  });

  it('refreshes the badge and warnings with the log, keeps what was typed, and announces the refresh politely without moving the focus', async () => {
    await page().goto(`${app.service.publicUrl}/portal/subscriptions/${webhookId}`);
    assert.equal(await page().textContent('.facts .badge'), 'healthy');
    assert.match((await page().textContent('section[aria-labelledby="warnings-heading"]')) ?? '', /None\./);
    await browser.type('#recover-since', '2026-01-01 00:00:00 UTC');

    // Three deliveries of two attempts each: six failures in a row, past the first "failing" warning.
    const event = await app.make.event(owner.id);
    for (let n = 0; n < 3; n += 1) await app.make.order(event.id);
    await eventually(async () => {
      const detail = (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data;
      const listed = (await app.admin('GET', `/internal/webhooks/${webhookId}/deliveries`)).body.data as Array<{
        status: string;
      }>;
      const settled = listed.length === 3 && listed.every((d) => d.status === 'failed');
      return settled && detail.warnings.length > 0 ? true : undefined;
    }, 'three deliveries to fail and a warning to be raised');

    await page().evaluate('window.stayedOnPage = true');
    const settled = page().evaluate(
      `new Promise((resolve) => document.body.addEventListener('htmx:afterSettle', () => resolve(true), { once: true }))`,
    );
    await browser.press('#refresh-log');
    await settled;
    assert.equal(await page().evaluate('window.stayedOnPage'), true, 'refreshed in place, not reloaded');
    assert.equal(await page().textContent('.facts .badge'), 'failing', 'the badge is as new as the log');
    assert.match(
      (await page().textContent('section[aria-labelledby="warnings-heading"]')) ?? '',
      /failing after \d+ failures in a row/,
    );
    const status = page().locator('[role=status][aria-live=polite]');
    assert.match(
      (await status.textContent()) ?? '',
      /^Log refreshed at \d{2}:\d{2}:\d{2} UTC, 3 deliveries shown; health: failing\.$/,
    );
    assert.equal(await activeId(), 'refresh-log', 'the focus stays on the refresh link');
    assert.equal(await page().inputValue('#recover-since'), '2026-01-01 00:00:00 UTC', 'what was typed is kept');
    await browser.checkPage('portal-log-refreshed');
  });

  it('shows a refused 0-second rotation again with the 0 kept and the focus on its box; ticking it then rotates with no grace, not a day’s', async () => {
    await page().goto(`${app.service.publicUrl}/portal/subscriptions/${webhookId}`);
    const before = (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret as string;
    await browser.tabTo('#grace-seconds');
    await page().keyboard.press('Control+A');
    await page().keyboard.type('0');
    await Promise.all([page().waitForNavigation(), page().keyboard.press('Enter')]);
    await page().locator('#confirm-no-grace:focus').waitFor({ timeout: 5_000 });
    assert.equal(await page().inputValue('#grace-seconds'), '0', 'the 0 typed is kept');
    assert.equal(await page().getAttribute('#confirm-no-grace', 'aria-invalid'), 'true');
    const describedBy = (await page().getAttribute('#confirm-no-grace', 'aria-describedby')) ?? '';
    assert.match(
      (await page().textContent(`#${describedBy}`)) ?? '',
      /With 0 seconds the current secret stops signing/,
    );
    assert.equal(await page().locator('p.flash').count(), 0, 'nothing said at the top of the page');
    await browser.checkPage('portal-rotation-refused');
    assert.equal(
      (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data.secret,
      before,
      'nothing rotated',
    );
    await page().keyboard.press('Space');
    await browser.submitWith('#rotate-secret');
    assert.match(new URL(page().url()).pathname, /\/secret$/);
    const rotated = (await app.admin('GET', `/internal/webhooks/${webhookId}`)).body.data;
    assert.notEqual(rotated.secret, before);
    assert.equal(rotated.secretRotation, null, 'the 0 kept: the old secret stopped signing at once');
  });

  it('leads from an Older deliveries page back to the newest, the address and the forms then naming the page shown', async () => {
    await insertFailedHistoryDeliveries(app.db, webhookId, 'dlv_back_', 105);
    await page().goto(`${app.service.publicUrl}/portal/subscriptions/${webhookId}`);
    await browser.submitWith('#older-deliveries');
    assert.match(new URL(page().url()).search, /^\?before=/);
    assert.equal(await page().locator('form[action$="/rotate-secret"] input[name=before]').count(), 1);
    // The log's first link: "Back to the newest" on an older page.
    await browser.press('#delivery-log-entries > p:first-child > a');
    await page().waitForURL((url) => url.search === '', { timeout: 5_000 });
    assert.match((await page().textContent('#delivery-log-entries')) ?? '', /The newest 100 deliveries/);
    assert.equal(await page().locator('input[name=before]').count(), 0, 'no form names the older page');
    await page().reload();
    assert.equal(new URL(page().url()).search, '', 'a reload stays on the newest');
  });

  it('wrote no error to the browser console but the refused form’s own 400', () => {
    assert.ok(
      browser.consoleErrors.every((line) => /status of 400/.test(line)),
      browser.consoleErrors.join('\n'),
    );
  });
});
