import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  emptyState,
  keepFlash,
  keepOnce,
  MAX_FLASHES,
  MAX_ONE_TIME_VALUES,
  newFlash,
  parseState,
  storedState,
  takeOnce,
} from './session-store';

// The expiry rules (idle, absolute, forgetting a destroyed or expired session) are the database's:
// they are asserted against the real table in test/dashboard-sessions.e2e-spec.ts.
describe('dashboard session store', () => {
  it('gives a value kept for one page to that page once, and to no other page', () => {
    const session = emptyState();
    keepOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret', 'whsec_a');
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_b/new-secret'), null);
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret'), 'whsec_a');
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret'), null);
  });

  it('keeps at most ten values shown once per session, forgetting the oldest untaken first', () => {
    const session = emptyState();
    for (let i = 0; i <= MAX_ONE_TIME_VALUES; i += 1) keepOnce(session, `/page/${i}`, `value ${i}`);
    assert.equal(MAX_ONE_TIME_VALUES, 10);
    assert.equal(session.oneTime.size, MAX_ONE_TIME_VALUES);
    assert.equal(takeOnce(session, '/page/0'), null);
    assert.equal(takeOnce(session, `/page/${MAX_ONE_TIME_VALUES}`), `value ${MAX_ONE_TIME_VALUES}`);
    assert.equal(takeOnce(session, '/page/1'), 'value 1');
  });

  it('keeps at most ten unseen flash messages, forgetting the oldest first', () => {
    const session = emptyState();
    for (let i = 0; i <= MAX_FLASHES; i += 1) keepFlash(session, newFlash({ kind: 'success', text: `message ${i}` }));
    assert.equal(MAX_FLASHES, 10);
    assert.equal(session.flashes.length, MAX_FLASHES);
    assert.equal(session.flashes[0]?.text, 'message 1');
  });

  it('reads back what it stored, in order, and leaves out malformed entries instead of trusting them', () => {
    const session = emptyState();
    keepFlash(session, newFlash({ kind: 'error', text: 'refused' }));
    keepOnce(session, '/a', 'sealed a');
    keepOnce(session, '/b', 'sealed b');
    const read = parseState(JSON.parse(JSON.stringify(storedState(session))));
    assert.deepEqual(read.flashes, session.flashes);
    assert.deepEqual([...read.oneTime], [...session.oneTime]);
    const odd = parseState({
      flashes: [{ id: 'x', kind: 'warning', text: 't' }, null, { id: 'y', kind: 'success', text: 'ok' }],
      oneTime: [['/a', 1], 'x', ['/b', 'v']],
    });
    assert.deepEqual(odd.flashes, [{ id: 'y', kind: 'success', text: 'ok' }]);
    assert.deepEqual([...odd.oneTime], [['/b', 'v']]);
    assert.equal(parseState(null).flashes.length, 0);
  });
});
