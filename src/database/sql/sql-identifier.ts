import { SqlFragment } from './sql-fragment';

/** What any identifier written by `sqlIdentifier` must look like: lowercase, unquoted-safe. */
const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A table name read from the catalogue, written into a DDL statement (DDL
 * takes no parameters: `ALTER TABLE ... DETACH PARTITION <name>`). Refused
 * unless it is a plain identifier and matches `pattern`, the shape the
 * caller expects (a day partition's name, say), so nothing else can reach
 * the text.
 */
export function sqlIdentifier(name: string, pattern: RegExp): SqlFragment {
  if (!PLAIN_IDENTIFIER.test(name) || !pattern.test(name)) {
    throw new TypeError(`sqlIdentifier refuses ${JSON.stringify(name)}: not a name of the expected shape`);
  }
  return new SqlFragment([`"${name}"`]);
}
