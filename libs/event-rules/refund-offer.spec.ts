import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventWhenAndWhere, shouldCreateRefundOffer } from './refund-offer';

const before: EventWhenAndWhere = { startTime: new Date('2025-06-01T18:00:00Z'), locationId: 'loc_a' };

void describe('shouldCreateRefundOffer', () => {
  void it('offers a refund when the date moves and the flag is true', () => {
    const after = { ...before, startTime: new Date('2025-06-08T18:00:00Z') };
    assert.equal(shouldCreateRefundOffer(before, after, true), true);
  });

  void it('offers a refund when the venue moves and the flag is true', () => {
    assert.equal(shouldCreateRefundOffer(before, { ...before, locationId: 'loc_b' }, true), true);
  });

  void it('never offers one unless the flag is literally true', () => {
    const after = { startTime: new Date('2025-06-08T18:00:00Z'), locationId: 'loc_b' };
    assert.equal(shouldCreateRefundOffer(before, after, false), false);
    assert.equal(shouldCreateRefundOffer(before, after, undefined), false);
    // What an untyped caller might pass through from a JSON body.
    assert.equal(shouldCreateRefundOffer(before, after, 'true' as unknown as boolean), false);
    assert.equal(shouldCreateRefundOffer(before, after, 1 as unknown as boolean), false);
  });

  void it('offers nothing when neither date nor venue moved, comparing instants by value', () => {
    const after = { startTime: new Date(before.startTime!.getTime()), locationId: 'loc_a' };
    assert.notEqual(after.startTime, before.startTime);
    assert.equal(shouldCreateRefundOffer(before, after, true), false);
  });

  void it('treats a start time or venue being set or cleared as a move', () => {
    assert.equal(shouldCreateRefundOffer(before, { ...before, startTime: null }, true), true);
    assert.equal(shouldCreateRefundOffer({ ...before, locationId: null }, before, true), true);
    const empty = { startTime: null, locationId: null };
    assert.equal(shouldCreateRefundOffer(empty, empty, true), false);
  });
});
