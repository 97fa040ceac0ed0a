import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keepOnce, MAX_ONE_TIME_VALUES, SessionStore, takeOnce } from './session-store';

describe('dashboard session store', () => {
  const clock = (): { now: () => number; advance: (ms: number) => void } => {
    let at = 1_000_000;
    return { now: () => at, advance: (ms) => (at += ms) };
  };

  it('expires a session after the idle time without a request', () => {
    const time = clock();
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 100_000, now: time.now });
    const { token } = store.create();
    time.advance(999);
    assert.notEqual(store.touch(token), null);
    time.advance(999);
    assert.notEqual(store.touch(token), null, 'each request restarts the idle clock');
    time.advance(1000);
    assert.equal(store.touch(token), null);
    assert.equal(store.touch(token), null, 'an expired session stays gone');
  });

  it('ends a session at the absolute limit however busy it is', () => {
    const time = clock();
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 3000, now: time.now });
    const { token } = store.create();
    for (let i = 0; i < 5; i += 1) {
      time.advance(500);
      assert.notEqual(store.touch(token), null);
    }
    time.advance(500);
    assert.equal(store.touch(token), null);
  });

  it('knows only the tokens it issued, and forgets a destroyed one', () => {
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 3000 });
    const { token, session } = store.create();
    assert.equal(store.touch(`${token}x`), null);
    assert.equal(store.touch(undefined), null);
    assert.equal(store.touch(token)?.id, session.id);
    store.destroy(token);
    assert.equal(store.touch(token), null);
  });

  it('forgets expired sessions when a new one is created', () => {
    const time = clock();
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 3000, now: time.now });
    store.create();
    store.create();
    time.advance(2000);
    store.create();
    assert.equal(store.size, 1);
  });

  it('gives a value kept for one page to that page once, and to no other page', () => {
    const { session } = new SessionStore({ idleMs: 1000, absoluteMs: 3000 }).create();
    keepOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret', 'whsec_a');
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_b/new-secret'), null);
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret'), 'whsec_a');
    assert.equal(takeOnce(session, '/internal/dashboard/webhooks/whk_a/new-secret'), null);
  });

  it('keeps at most ten values shown once per session, forgetting the oldest untaken first', () => {
    const { session } = new SessionStore({ idleMs: 1000, absoluteMs: 3000 }).create();
    for (let i = 0; i <= MAX_ONE_TIME_VALUES; i += 1) keepOnce(session, `/page/${i}`, `value ${i}`);
    assert.equal(MAX_ONE_TIME_VALUES, 10);
    assert.equal(session.oneTime.size, MAX_ONE_TIME_VALUES);
    assert.equal(takeOnce(session, '/page/0'), null);
    assert.equal(takeOnce(session, `/page/${MAX_ONE_TIME_VALUES}`), `value ${MAX_ONE_TIME_VALUES}`);
    assert.equal(takeOnce(session, '/page/1'), 'value 1');
  });
});
