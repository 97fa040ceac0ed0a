import { createHmac, timingSafeEqual } from 'node:crypto';

/** Where a page ended: the ordering it belongs to and the last row it showed. */
export interface CursorPosition {
  /** Names one list and one ordering, e.g. `events:start_time_desc`. */
  ordering: string;
  /** The anchor row's ordering value, in a form the database reads back exactly. */
  value: string;
  /** The anchor row's id, the tie-breaker of every ordering. */
  id: string;
}

const TAG_BYTES = 12;

/**
 * Cursors are opaque to clients and tamper-evident: base64url JSON followed by
 * a truncated HMAC-SHA256 tag. A cursor that was edited, truncated or made up
 * fails `decode`; the caller turns that into `400 invalid_cursor`.
 *
 * `list` names the one list a cursor belongs to (whose rows, for whom: an
 * event's orders, one account's events). It is signed with the cursor but
 * not written into it, so a cursor decodes only for the list it was made for.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {
    if (key.length < 16) throw new Error('cursor signing key must be at least 16 bytes');
  }

  encode(position: CursorPosition, list = ''): string {
    const payload = Buffer.from(JSON.stringify([position.ordering, position.value, position.id])).toString('base64url');
    return `${payload}.${this.tag(payload, list)}`;
  }

  decode(cursor: string, list = ''): CursorPosition | null {
    if (cursor.length === 0 || cursor.length > 512) return null;
    const dot = cursor.indexOf('.');
    if (dot <= 0) return null;
    const payload = cursor.slice(0, dot);
    // Compare the tag as text: base64url decoding would ignore a dangling extra character.
    const tag = Buffer.from(cursor.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.tag(payload, list), 'utf8');
    if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return null;
    try {
      const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (!Array.isArray(parsed) || parsed.length !== 3) return null;
      const [ordering, value, id] = parsed as unknown[];
      if (typeof ordering !== 'string' || typeof value !== 'string' || typeof id !== 'string') return null;
      return { ordering, value, id };
    } catch {
      return null;
    }
  }

  private tag(payload: string, list: string): string {
    const hmac = createHmac('sha256', this.key).update(payload);
    // The payload is base64url, so no list can be mistaken for the end of another payload.
    if (list !== '') hmac.update(`.${list}`);
    return hmac.digest().subarray(0, TAG_BYTES).toString('base64url');
  }
}
