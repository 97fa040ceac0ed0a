import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { within } from './within';

describe('within', () => {
  it('answers with the work when it settles in time', async () => {
    assert.equal(await within(Promise.resolve(42), 1_000, 'the answer'), 42);
    await assert.rejects(within(Promise.reject(new Error('refused')), 1_000, 'the answer'), /refused/);
  });

  it('rejects, naming what did not answer, once the time has passed', async () => {
    const never = new Promise<number>(() => undefined);
    await assert.rejects(within(never, 20, 'the counter'), /^Error: the counter did not answer within 20 ms$/);
  });

  it('leaves no unhandled rejection when the work fails after the timeout won', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const late = new Promise<number>((_, reject) => setTimeout(() => reject(new Error('late')), 30));
      await assert.rejects(within(late, 5, 'the work'), /did not answer within 5 ms/);
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
