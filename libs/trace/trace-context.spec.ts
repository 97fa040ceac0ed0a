import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTraceId, traceIdFromTraceparent, traceparentFor } from './trace-context';

void describe('trace context', () => {
  void it("reads the trace id of a caller's W3C traceparent", () => {
    assert.equal(
      traceIdFromTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    // A later version may append fields; the trace id still counts.
    assert.equal(
      traceIdFromTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'),
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });

  void it('ignores an invalid traceparent so that a new trace starts', () => {
    for (const header of [
      undefined,
      '',
      'garbage',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ]) {
      assert.equal(traceIdFromTraceparent(header), null, String(header));
    }
  });

  void it('writes a traceparent per attempt: same trace, fresh span id, sampled', () => {
    const traceId = newTraceId();
    assert.match(traceId, /^[0-9a-f]{32}$/);
    const first = traceparentFor(traceId);
    const second = traceparentFor(traceId);
    assert.match(first, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    assert.notEqual(first, second);
    assert.equal(traceIdFromTraceparent(first), traceId);
  });

  void it('draws ids from fresh random bytes across refills of the random block: none repeats, none is all zero', () => {
    // Far more ids than one block holds, so the block is refilled many times.
    const ids = Array.from({ length: 2_000 }, () => newTraceId());
    const spans = Array.from({ length: 2_000 }, () => traceparentFor(ids[0]!).split('-')[2]!);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(new Set(spans).size, spans.length);
    for (const id of [...ids, ...spans]) assert.match(id, /^(?!0+$)[0-9a-f]+$/);
  });
});
