import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CursorCodec } from './cursor-codec';

const codec = new CursorCodec(Buffer.alloc(32, 7));

describe('CursorCodec', () => {
  it('round-trips any position', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (ordering, value, id) => {
        assert.deepEqual(codec.decode(codec.encode({ ordering, value, id })), { ordering, value, id });
      }),
    );
  });

  it('refuses a cursor whose payload was edited', () => {
    const cursor = codec.encode({ ordering: 'events:start_time_desc', value: '2027-01-01T00:00:00.000Z', id: 'evt_1' });
    const [payload, tag] = cursor.split('.');
    const edited = Buffer.from(
      JSON.stringify(['events:start_time_desc', '2000-01-01T00:00:00.000Z', 'evt_1']),
    ).toString('base64url');
    assert.notEqual(edited, payload);
    assert.equal(codec.decode(`${edited}.${tag}`), null);
  });

  it('refuses a cursor signed with another key', () => {
    const foreign = new CursorCodec(Buffer.alloc(32, 8)).encode({ ordering: 'o', value: 'v', id: 'i' });
    assert.equal(codec.decode(foreign), null);
  });

  it('refuses a cursor with characters added to or removed from its tag', () => {
    const cursor = codec.encode({ ordering: 'o', value: 'v', id: 'i' });
    assert.equal(codec.decode(`${cursor}A`), null);
    assert.equal(codec.decode(cursor.slice(0, -1)), null);
  });

  it('decodes a cursor only for the list it was made for', () => {
    const position = { ordering: 'orders:created_at_desc', value: '2027-01-01T00:00:00.000Z', id: 'ord_1' };
    const cursor = codec.encode(position, '{"eventId":"evt_a"}');
    assert.deepEqual(codec.decode(cursor, '{"eventId":"evt_a"}'), position);
    assert.equal(codec.decode(cursor, '{"eventId":"evt_b"}'), null);
    assert.equal(codec.decode(cursor), null);
    assert.equal(codec.decode(codec.encode(position), '{"eventId":"evt_a"}'), null);
  });

  it('refuses malformed text without throwing', () => {
    for (const text of ['', '.', 'abc', 'abc.', '.abc', 'a.b.c', 'x'.repeat(600)]) {
      assert.equal(codec.decode(text), null, text);
    }
  });
});
