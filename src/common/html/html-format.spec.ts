import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInstantText } from '../../../libs/time/instant';
import { instant, instantFieldText, money, shortened, webhookName } from './html-format';

describe('instants on pages and in forms', () => {
  it('reads back in a form the time format the pages show, as the ISO 8601 instant it stands for', () => {
    const iso = '2026-12-07T00:24:46.000Z';
    assert.equal(instant(iso), '2026-12-07 00:24:46 UTC');
    assert.equal(parseInstantText(instantFieldText(instant(iso)))?.toISOString(), iso);
    assert.equal(instantFieldText(' 2026-12-07 00:24 utc '), '2026-12-07T00:24Z');
  });

  it('leaves any other text of a time field as typed, for the instant parser to accept or refuse', () => {
    for (const text of ['2026-12-07T00:24:46Z', '1765067086000', 'yesterday', '2026-12-07 00:24:46 CET']) {
      assert.equal(instantFieldText(text), text);
    }
  });
});

describe('amounts on pages', () => {
  it('shows integer minor units with the currency’s own minor-unit digits', () => {
    assert.equal(money(1500, 'JPY'), '1500 JPY');
    assert.equal(money(1500, 'EUR'), '15.00 EUR');
    assert.equal(money(1500, 'KWD'), '1.500 KWD');
    assert.equal(money(7, 'BHD'), '0.007 BHD');
    assert.equal(money(1500, 'jpy'), '1500 jpy', 'a code stored in lower case is the same currency');
  });

  it('keeps the sign of a negative amount, whatever the digits', () => {
    assert.equal(money(-5, 'EUR'), '-0.05 EUR');
    assert.equal(money(-1500, 'JPY'), '-1500 JPY');
    assert.equal(money(-1500, 'KWD'), '-1.500 KWD');
  });

  it('shows 2 digits for a code Intl cannot read', () => {
    assert.equal(money(1500, 'EU1'), '15.00 EU1');
  });
});

describe('names of webhook subscriptions', () => {
  const hook = { id: 'whk_1', url: 'https://hooks.example.com:8443/in' };

  it('names a subscription by its host and description, or by its id when it has none', () => {
    assert.equal(webhookName({ ...hook, description: 'Box office' }), 'Webhook to hooks.example.com:8443: Box office');
    assert.equal(webhookName({ ...hook, description: null }), 'Webhook to hooks.example.com:8443 (whk_1)');
    assert.equal(webhookName({ ...hook, description: '' }), 'Webhook to hooks.example.com:8443 (whk_1)');
  });

  it('shortens a long description after a whole word, with an ellipsis, and never cuts a character in two', () => {
    const long = 'Tickets for the harbour stage and the quayside tent, sent to the box office till';
    const name = webhookName({ ...hook, description: long });
    assert.equal(name, 'Webhook to hooks.example.com:8443: Tickets for the harbour stage and the quayside tent, sent…');
    assert.equal(shortened('x'.repeat(100), 10), `${'x'.repeat(9)}…`, 'one long word is cut within it');
    assert.equal(shortened('abc def', 7), 'abc def', 'a text that fits is kept whole');
    assert.equal(shortened('😀'.repeat(20), 5), `${'😀'.repeat(4)}…`);
  });
});
