import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInstant } from '../../../libs/time/instant';
import { instant, instantFieldText } from './html-format';

describe('instants on pages and in forms', () => {
  it('reads back in a form the time format the pages show, as the ISO 8601 instant it stands for', () => {
    const iso = '2026-12-07T00:24:46.000Z';
    assert.equal(instant(iso), '2026-12-07 00:24:46 UTC');
    assert.equal(parseInstant(instantFieldText(instant(iso)))?.toISOString(), iso);
    assert.equal(instantFieldText(' 2026-12-07 00:24 utc '), '2026-12-07T00:24Z');
  });

  it('leaves any other text of a time field as typed, for the instant parser to accept or refuse', () => {
    for (const text of ['2026-12-07T00:24:46Z', '1765067086000', 'yesterday', '2026-12-07 00:24:46 CET']) {
      assert.equal(instantFieldText(text), text);
    }
  });
});
