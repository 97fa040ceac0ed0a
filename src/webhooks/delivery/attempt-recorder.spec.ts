import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AttemptRecorder } from './attempt-recorder';
import type { ClaimedDelivery } from './claimed-delivery';
import type { AttemptRecord, AttemptRecorded } from './attempt-record.repository';

function record(id: string): AttemptRecord {
  const delivery = { id, subscriptionId: 'whk_a', leaseToken: 'lease' } as ClaimedDelivery;
  return {
    delivery,
    attemptedAt: new Date(),
    outcome: 200,
    durationMs: 1,
    httpStatus: 200,
    responseExcerpt: '',
    succeeded: true,
    trigger: 'scheduled',
    next: { status: 'succeeded', retryInMs: null },
  };
}

const written = (id: string): AttemptRecorded => ({ deliveryUpdated: id !== 'lost', disabledNow: false, warnings: [] });

/** A write that is held open until the test lets it finish, to see what gathers meanwhile. */
function heldWrites() {
  const batches: string[][] = [];
  const release: Array<() => void> = [];
  const write = async (records: readonly AttemptRecord[]) => {
    batches.push(records.map((r) => r.delivery.id));
    await new Promise<void>((done) => release.push(done));
    return records.map((r): PromiseSettledResult<AttemptRecorded> => {
      if (r.delivery.id === 'refused') return { status: 'rejected', reason: new Error('refused') };
      return { status: 'fulfilled', value: written(r.delivery.id) };
    });
  };
  const finishNext = async (): Promise<void> => {
    await waitFor(() => release.length > 0);
    release.shift()?.();
  };
  return { batches, write, finishNext };
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('AttemptRecorder', () => {
  it('writes attempts that finish together in one write, and gathers the next batch while a write is under way', async () => {
    const writes = heldWrites();
    const recorder = new AttemptRecorder(writes.write, { maxBatch: 32, gatherMs: 5 });
    const first = ['a', 'b', 'c'].map((id) => recorder.record(record(id)));
    await waitFor(() => writes.batches.length === 1);
    const second = ['d', 'e'].map((id) => recorder.record(record(id)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(writes.batches.length, 1, 'no second write while the first is under way');
    await writes.finishNext();
    await writes.finishNext();
    assert.deepEqual(await Promise.all([...first, ...second]), ['a', 'b', 'c', 'd', 'e'].map(written));
    assert.deepEqual(writes.batches, [
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
  });

  it('writes at most maxBatch attempts at once, the rest right after', async () => {
    const writes = heldWrites();
    const recorder = new AttemptRecorder(writes.write, { maxBatch: 2, gatherMs: 1_000 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((id) => recorder.record(record(id)));
    await writes.finishNext();
    await writes.finishNext();
    await writes.finishNext();
    await Promise.all(all);
    assert.deepEqual(writes.batches, [['a', 'b'], ['c', 'd'], ['e']], 'a full batch does not wait out gatherMs');
  });

  it('settles each attempt on its own: a refused one rejects, the others of its batch resolve', async () => {
    const writes = heldWrites();
    const recorder = new AttemptRecorder(writes.write, { maxBatch: 32, gatherMs: 1 });
    const results = Promise.allSettled(['a', 'refused', 'lost'].map((id) => recorder.record(record(id))));
    await writes.finishNext();
    assert.deepEqual(
      (await results).map((r) => (r.status === 'fulfilled' ? r.value.deliveryUpdated : 'rejected')),
      [true, 'rejected', false],
    );
  });

  it('rejects every attempt of a batch whose write failed, and writes the next batch', async () => {
    let calls = 0;
    const recorder = new AttemptRecorder(
      async (records) => {
        calls += 1;
        if (calls === 1) throw new Error('database down');
        return records.map((r) => ({ status: 'fulfilled' as const, value: written(r.delivery.id) }));
      },
      { maxBatch: 32, gatherMs: 1 },
    );
    const failed = await Promise.allSettled(['a', 'b'].map((id) => recorder.record(record(id))));
    assert.deepEqual(
      failed.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.deepEqual(await recorder.record(record('c')), written('c'));
  });
});
