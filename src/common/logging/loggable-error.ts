/**
 * Errors as they may be logged. A database error (TypeORM's
 * QueryFailedError, or the driver's own) carries the SQL text, its
 * parameters and PostgreSQL's `detail` and `where`, which quote row values:
 * billing emails, sealed secrets, key hashes. Only what names the failure is
 * kept: its type, SQLSTATE code, the schema objects involved, the message up
 * to where PostgreSQL starts quoting the value, and the stack frames.
 */
export interface LoggableError {
  type: string;
  message: string;
  code?: string;
  table?: string;
  column?: string;
  constraint?: string;
  stack?: string;
}

interface DriverErrorFields {
  code?: unknown;
  severity?: unknown;
  table?: unknown;
  column?: unknown;
  constraint?: unknown;
  driverError?: unknown;
  query?: unknown;
  parameters?: unknown;
}

function isDatabaseError(error: Error, fields: DriverErrorFields): boolean {
  return (
    error.name === 'QueryFailedError' ||
    fields.driverError !== undefined ||
    fields.parameters !== undefined ||
    fields.query !== undefined ||
    typeof fields.severity === 'string'
  );
}

/** PostgreSQL writes the offending value after a colon: `invalid input syntax for type uuid: "…"`. */
function withoutValues(message: string): string {
  const colon = message.indexOf(': ');
  return colon === -1 ? message : `${message.slice(0, colon)}: [value withheld]`;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function loggableError(error: unknown): LoggableError {
  if (!(error instanceof Error)) return { type: typeof error, message: 'a non-Error value was thrown' };
  const fields = error as Error & DriverErrorFields;
  if (!isDatabaseError(error, fields)) {
    return { type: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }) };
  }
  const driver = (
    typeof fields.driverError === 'object' && fields.driverError !== null ? fields.driverError : fields
  ) as DriverErrorFields;
  const message = withoutValues(error.message);
  const frames = error.stack?.split('\n').filter((line) => /^\s+at /.test(line)) ?? [];
  const result: LoggableError = {
    type: error.name,
    message,
    stack: [`${error.name}: ${message}`, ...frames].join('\n'),
  };
  const code = text(driver.code) ?? text(fields.code);
  if (code !== undefined) result.code = code;
  const table = text(driver.table);
  if (table !== undefined) result.table = table;
  const column = text(driver.column);
  if (column !== undefined) result.column = column;
  const constraint = text(driver.constraint);
  if (constraint !== undefined) result.constraint = constraint;
  return result;
}

/** One line for a message string: type, code and the value-free message. */
export function describeError(error: unknown): string {
  const loggable = loggableError(error);
  return `${loggable.type}${loggable.code === undefined ? '' : ` ${loggable.code}`}: ${loggable.message}`;
}
