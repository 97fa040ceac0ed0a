import { sql, sqlText, type SqlFragment } from '../database/sql/sql-fragment';

/**
 * The one place another context may name `organiser` in SQL: the venue
 * key's keyset page of events must know, in the same statement, which
 * events belong to an unclaimed placeholder business (their unlisted events
 * are visible to venues). Composing this fragment keeps that coupling
 * explicit and greppable. `organiserIdColumn` is the column holding the event's organiser.
 */
export function isPlaceholderOrganiserSql(organiserIdColumn: string): SqlFragment {
  return sql`EXISTS (SELECT 1 FROM organiser o WHERE o.id = ${sqlText(organiserIdColumn)} AND o.placeholder)`;
}
