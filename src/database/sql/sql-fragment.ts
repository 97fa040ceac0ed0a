/**
 * SQL text with named parameters, built with the `sql` tag:
 *
 *     sql`UPDATE webhook_delivery SET lease_token = NULL WHERE id = ${p.deliveryId}`
 *
 * A value is never spliced into the text: an interpolation is either a named
 * parameter (from a statement's parameter object, see `defineStatement`) or
 * another fragment (a column list, a condition). Plain strings are refused,
 * by the types and at run time, so a value cannot reach the text by accident;
 * text fixed in code that is not a fragment yet goes through `sqlText`.
 */
export class SqlFragment {
  constructor(
    /** @internal text and parameter references in order */
    readonly parts: ReadonlyArray<string | SqlParameter>,
    /**
     * The fragment selects a view's timestamps as they are stored, to be read
     * as ISO strings (see `isoTimestamp` in sql-columns); a statement built
     * from it reads every `timestamptz` that way.
     */
    readonly readsIsoTimestamps = false,
  ) {}
}

/** A reference to one named parameter of a statement; compiled to `$n`. */
export class SqlParameter {
  constructor(readonly name: string) {}
}

export type SqlValue = SqlParameter | SqlFragment;

export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): SqlFragment {
  const parts: Array<string | SqlParameter> = [];
  let readsIsoTimestamps = false;
  strings.forEach((text, i) => {
    parts.push(text);
    if (i >= values.length) return;
    const value: unknown = values[i];
    if (value instanceof SqlFragment) {
      parts.push(...value.parts);
      readsIsoTimestamps ||= value.readsIsoTimestamps;
    } else if (value instanceof SqlParameter) parts.push(value);
    else
      throw new TypeError('sql`…` takes named parameters and fragments only; a value is never written into the text');
  });
  return new SqlFragment(parts, readsIsoTimestamps);
}

/** Text fixed in code (an identifier, a channel name, a list built from constants); never a request's value. */
export function sqlText(text: string): SqlFragment {
  return new SqlFragment([text]);
}

/** Fragments joined by a separator, e.g. the conditions of a WHERE clause joined by ` AND `. */
export function joinSql(fragments: readonly SqlFragment[], separator: string): SqlFragment {
  const parts: Array<string | SqlParameter> = [];
  fragments.forEach((fragment, i) => {
    if (i > 0) parts.push(separator);
    parts.push(...fragment.parts);
  });
  return new SqlFragment(
    parts,
    fragments.some((fragment) => fragment.readsIsoTimestamps),
  );
}

/** The parameter references a statement's builder receives: one per member of its parameter object. */
export type SqlParameters<Params> = { readonly [Name in keyof Params]-?: SqlParameter };

/** A proxy that hands out a reference for whichever member is read, so a builder names parameters as properties. */
export function parameterReferences<Params>(): SqlParameters<Params> {
  return new Proxy({} as SqlParameters<Params>, {
    get: (_target, name) => {
      if (typeof name !== 'string') throw new TypeError('SQL parameters are named by strings');
      return new SqlParameter(name);
    },
  });
}
