/**
 * A list result. `envelopeOf` (envelope.ts) turns it into
 * `{data, has_more, next_cursor}`; `nextCursor` is null exactly when
 * `hasMore` is false.
 */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly hasMore: boolean,
    readonly nextCursor: string | null,
  ) {
    if (hasMore !== (nextCursor !== null)) {
      throw new Error('a page has a next cursor exactly when it has more rows');
    }
  }

  /** The same page with each item mapped (rows to response shapes). */
  map<U>(present: (item: T) => U): Page<U> {
    return new Page(this.items.map(present), this.hasMore, this.nextCursor);
  }

  static single<T>(items: T[]): Page<T> {
    return new Page(items, false, null);
  }
}

/**
 * A body already serialised to its JSON text, sent as these bytes: for a
 * response whose ETag is computed over the text, so it is serialised once.
 */
export class SerializedBody {
  private constructor(readonly json: string) {}

  /** The `{data}` envelope of `data`, as `envelopeOf` would build it, serialised. */
  static enveloped(data: unknown): SerializedBody {
    return new SerializedBody(JSON.stringify({ data }));
  }
}

/** A body sent exactly as given: for `GET /v1`, whose members sit at the top level. */
export class TopLevelBody<T extends object> {
  constructor(readonly body: T) {}
}
