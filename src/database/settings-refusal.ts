/**
 * The server's answers to a connection that no retry can change, by
 * SQLSTATE: the same user, password and database name get the same answer
 * every time. A start stops at the first of them instead of retrying for
 * half a minute, and says what to correct. A refused or unanswered
 * connection is not among them: the server may still be starting.
 */
const REFUSED_SETTINGS: ReadonlyMap<string, string> = new Map([
  ['28P01', 'a wrong password'],
  ['28000', 'a user the server does not admit from this host, unknown or without a pg_hba.conf entry'],
  ['3D000', 'a database that does not exist'],
]);

export interface SettingsRefusal {
  sqlstate: string;
  /** What is wrong with the settings, as the object of "no retry fixes …". */
  what: string;
}

/** The connection settings the server refused, or null for a failure that a retry may get past. */
export function settingsRefusal(error: unknown): SettingsRefusal | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, driverError } = error as { code?: unknown; driverError?: unknown };
  if (code === undefined && driverError !== undefined) return settingsRefusal(driverError);
  if (typeof code !== 'string') return null;
  const what = REFUSED_SETTINGS.get(code);
  return what === undefined ? null : { sqlstate: code, what };
}
