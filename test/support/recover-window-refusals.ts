import assert from 'node:assert/strict';

/**
 * The refused recovery window as the dashboard's webhook page and the portal's subscription page
 * both show it (one form partial): what was typed kept, the refusal beside the field it names,
 * the focus on that field alone. The windows the two suites type are the same.
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
