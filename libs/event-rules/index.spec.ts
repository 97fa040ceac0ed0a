import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as rules from './index';

void describe('event-rules index', () => {
  void it('re-exports the functions the service calls', () => {
    for (const name of [
      'parseEventPatch',
      'hasWritableFields',
      'normaliseAdditionalLocationIds',
      'parsePlanning',
      'isPublishable',
      'parseOnlineMeeting',
      'noonInTimeZone',
      'isValidTimeZone',
      'shouldCreateRefundOffer',
    ] as const) {
      assert.equal(typeof rules[name], 'function', name);
    }
    assert.deepEqual([...rules.VISIBILITIES], ['draft', 'unlisted', 'cancelled', 'public']);
    assert.equal(Object.keys(rules.MEETING_PROVIDERS).length, 3);
  });
});
