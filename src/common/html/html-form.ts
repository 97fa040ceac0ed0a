import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import type { FastifyRequest } from 'fastify';

/** A posted urlencoded form: every value a string, or several strings for repeated names (checkboxes). */
export class HtmlForm {
  private readonly fields: Record<string, unknown>;

  constructor(request: FastifyRequest) {
    const body = request.body;
    this.fields =
      typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  }

  /** The trimmed text of a field; empty and missing are both null. */
  text(name: string): string | null {
    const raw = this.fields[name];
    const value: unknown = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
    if (typeof value !== 'string') return null;
    const trimmed = value.trim();
    return trimmed === '' ? null : trimmed;
  }

  list(name: string): string[] {
    const raw = this.fields[name];
    const values = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    return values.filter((value): value is string => typeof value === 'string' && value !== '');
  }

  checked(name: string): boolean {
    return this.text(name) !== null;
  }
}

/**
 * Validates a form's values with the same DTO class (and so the same rules)
 * as the internal JSON API, returning the first message per field.
 */
export async function validateAs<T extends object>(
  type: new () => T,
  plain: Record<string, unknown>,
): Promise<{ value: T; errors: Record<string, string> }> {
  const value = plainToInstance(type, plain);
  const failures = await validate(value, { whitelist: true, validationError: { target: false, value: false } });
  const errors: Record<string, string> = {};
  const collect = (list: ValidationError[]): void => {
    for (const failure of list) {
      const message = Object.values(failure.constraints ?? {})[0];
      if (message !== undefined && errors[failure.property] === undefined) errors[failure.property] = message;
      collect(failure.children ?? []);
    }
  };
  collect(failures);
  return { value, errors };
}

/** Only the fields that were filled in, so optional DTO members stay absent rather than empty. */
export function filled(values: Record<string, string | null>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== null));
}
