/**
 * What names a failure of the database layer's own background work (the
 * notification connection, the scheduled jobs) for a log line, without
 * quoting anything a statement carried: its type and its code (SQLSTATE,
 * or the system's, such as ECONNREFUSED); the message only for errors that
 * are not the server's (a timeout of ours, a socket's end), which quote no row.
 */
export function failureName(error: unknown): string {
  if (!(error instanceof Error)) return 'a non-Error value was thrown';
  const { code, severity } = error as Error & { code?: unknown; severity?: unknown };
  const coded = typeof code === 'string' && code !== '' ? `${error.name} ${code}` : error.name;
  // The server's errors carry a severity, and their messages may quote a value.
  return typeof severity === 'string' ? coded : `${coded}: ${error.message}`;
}
