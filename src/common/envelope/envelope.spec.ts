import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envelopeOf } from './envelope';
import { Page, TopLevelBody } from './page';

describe('envelopeOf', () => {
  it('sends a list as {data, has_more, next_cursor}', () => {
    assert.deepEqual(envelopeOf(new Page([{ id: 'a' }], true, 'c1')), {
      data: [{ id: 'a' }],
      has_more: true,
      next_cursor: 'c1',
    });
    assert.deepEqual(envelopeOf(Page.single([])), { data: [], has_more: false, next_cursor: null });
  });

  it('sends a single resource as {data}, whatever fields it has', () => {
    // Decided by type: an object that merely looks like an envelope is still wrapped.
    const lookalike = { data: [], has_more: false, next_cursor: null };
    assert.deepEqual(envelopeOf(lookalike), { data: lookalike });
    assert.deepEqual(envelopeOf({ id: 'evt_1' }), { data: { id: 'evt_1' } });
  });

  it('sends a TopLevelBody as it is (GET /v1, whose members sit at the top level)', () => {
    const body = { data: { id: 'org_1' }, id: 'org_1' };
    assert.equal(envelopeOf(new TopLevelBody(body)), body);
  });
});
