import assert from 'node:assert/strict';

/**
 * What the dashboard's webhook page and the portal's subscription page both show, from the same
 * partials, checked once for both suites.
 *
 * The refused recovery window: what was typed kept, the refusal beside the field it names, the
 * focus on that field alone. The windows the two suites type are the same.
 */

/** `since: 'yesterday <ish>', until: '2026-01-02'`: Since is unreadable, Until is kept and not marked. */
export function assertUnreadableSinceShown(html: string): void {
  assert.match(
    html,
    /<input id="recover-since"[^>]* value="yesterday &lt;ish&gt;"\s+aria-invalid="true" aria-describedby="recover-since-error" autofocus>/,
  );
  assert.match(html, /<p id="recover-since-error" class="field-error">Since must be an instant/);
  assert.match(html, /<input id="recover-until"[^>]* value="2026-01-02"\s*>/, 'Until kept, not marked');
  assert.equal(html.match(/\sautofocus\b/g)?.length, 1, 'one element takes the focus');
  assert.doesNotMatch(html, /class="flash/, 'nothing said at the top of the page');
}

/**
 * `since: '2026-02-01T00:00:00Z', until: '2026-01-01', before: 'dlv_typed_0006'`: Until before Since, refused
 * beside Until, shown on the page of the log (deliveries `dlv_typed_NNNN`) it was sent from.
 */
export function assertUntilBeforeSinceShown(html: string): void {
  assert.match(
    html,
    /<input id="recover-until"[^>]* value="2026-01-01"\s+aria-invalid="true" aria-describedby="recover-until-error" autofocus>/,
  );
  assert.match(html, /<p id="recover-until-error" class="field-error">Until must not be before Since/);
  assert.match(html, /<input id="recover-since"[^>]* value="2026-02-01T00:00:00Z"\s*>/);
  assert.match(html, /name="before" value="dlv_typed_0006"/, 'shown on the page of the log it was sent from');
  assert.match(html, /<code>dlv_typed_0005<\/code>/);
}

/**
 * The page's "Refresh the log" link and what it swaps besides the log (the health figures, the
 * warnings and the polite status that announces the refresh), on a healthy subscription's page as
 * loaded. Returns the link's element, for what each page checks of its own.
 */
export function assertRefreshLinkShown(html: string): string {
  assert.match(html, /<p id="log-status" role="status" aria-live="polite" aria-atomic="true"><\/p>/);
  const refresh = /<a id="refresh-log"[^>]*>/.exec(html)?.[0] ?? '';
  const swapped = /hx-select-oob="([^"]*)"/.exec(refresh)?.[1]?.split(',') ?? [];
  for (const part of ['#webhook-facts', '#webhook-warnings', '#log-status:innerHTML']) {
    assert.ok(swapped.includes(part), `the refresh also swaps ${part}: ${refresh}`);
  }
  assert.match(html, /<dl class="facts" id="webhook-facts">\s*<dt>Health<\/dt><dd><span class="badge badge-healthy">/);
  assert.match(html, /<section id="webhook-warnings" aria-labelledby="warnings-heading">/);
  return refresh;
}

/** A refresh's answer (htmx) of a healthy log of three deliveries: the status says when, how many and the health. */
export function assertRefreshAnnounced(html: string): void {
  assert.match(
    html,
    /<p id="log-status" role="status" aria-live="polite" aria-atomic="true">Log refreshed at \d{2}:\d{2}:\d{2} UTC, 3 deliveries shown; health: healthy\.<\/p>/,
  );
}
