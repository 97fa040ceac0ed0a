import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { unstorableTextProblem } from '../../../libs/json/json-shape';

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
 * Why a posted form cannot be taken as it is, or null: a value PostgreSQL's
 * text cannot hold (NUL; a lone surrogate, which a urlencoded body can only
 * carry as U+FFFD, checked all the same). A field reaches SQL as text,
 * where it would fail the request as the server's fault.
 */
export function unstorableFormProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  for (const [name, raw] of Object.entries(body as Record<string, unknown>)) {
    for (const value of Array.isArray(raw) ? (raw as unknown[]) : [raw]) {
      const problem = typeof value === 'string' ? unstorableTextProblem(value) : null;
      if (problem === null) continue;
      const field = unstorableTextProblem(name) === null ? `The form field ${name.slice(0, 40)}` : 'A form field';
      return `${field} ${problem}; nothing was changed.`;
    }
  }
  return null;
}

/** A form's visible label for each field the JSON API's messages name by its path (`title.EN`, `lineItems.0.quantity`). */
export type FieldLabels = Readonly<Record<string, string>>;

function escapedForPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A refusal in the words of the form a person filled in: each field the
 * message names by the JSON API's path is named by its label instead
 * ("Quantity must be an integer number", not "lineItems.0.quantity …").
 * A path counts only whole: not inside a longer path, nor as a path's tail.
 */
export function inLabelWords(message: string, labels: FieldLabels): string {
  const paths = Object.keys(labels).sort((a, b) => b.length - a.length);
  if (paths.length === 0) return message;
  const named = new RegExp(`(?<![\\w.])(?:${paths.map(escapedForPattern).join('|')})(?!\\w|\\.\\w)`, 'g');
  return message.replace(named, (path) => labels[path] ?? path);
}

/** Which form field each path of the JSON API's messages is about (`lineItems.0.quantity` → `quantity`). */
export type FieldPaths = Readonly<Record<string, string>>;

/** What a form refused, for showing each part beside the field it is about. */
export interface FormRefusal {
  /** By form field name, in the words of the form's labels. */
  fields: Record<string, string>;
  /** What names no field of the form: said at the form's top, or null. */
  form: string | null;
}

function asSentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * A refusal of the JSON API's rules split by the form field each part is
 * about, so each shows beside its field. Those messages start with the path
 * they refuse (`totalAmountMinor must be …`), several joined by "; ". A part
 * that starts with no path of `paths` goes on the part before it (its
 * reason, as in "…; nothing was changed"), or, first, to the form's top.
 */
export function refusalByField(message: string, paths: FieldPaths, labels: FieldLabels): FormRefusal {
  const known = Object.keys(paths).sort((a, b) => b.length - a.length);
  const leading =
    known.length === 0 ? null : new RegExp(`^(?:${known.map(escapedForPattern).join('|')})(?!\\w|\\.\\w)`);
  const parts: Array<{ field: string | null; text: string }> = [];
  for (const part of message.split(/;\s+/)) {
    const path = leading?.exec(part)?.[0];
    const last = parts[parts.length - 1];
    if (path !== undefined) parts.push({ field: paths[path] ?? null, text: part });
    else if (last !== undefined) last.text = `${last.text}; ${part}`;
    else parts.push({ field: null, text: part });
  }
  const refusal: FormRefusal = { fields: {}, form: null };
  for (const { field, text } of parts) {
    const said = asSentence(inLabelWords(text.replace(/\.$/, ''), labels));
    if (field === null) refusal.form = refusal.form === null ? said : `${refusal.form} ${said}`;
    // A second refusal of the same field is left out: the first is what to change first.
    else refusal.fields[field] ??= said;
  }
  return refusal;
}

/**
 * Validates a form's values with the same DTO class (and so the same rules)
 * as the internal JSON API, returning the first message per field, in the
 * words of the form's labels.
 */
export async function validateAs<T extends object>(
  type: new () => T,
  plain: Record<string, unknown>,
  labels: FieldLabels,
): Promise<{ value: T; errors: Record<string, string> }> {
  const value = plainToInstance(type, plain);
  const failures = await validate(value, { whitelist: true, validationError: { target: false, value: false } });
  const errors: Record<string, string> = {};
  const collect = (list: ValidationError[]): void => {
    for (const failure of list) {
      const message = Object.values(failure.constraints ?? {})[0];
      if (message !== undefined && errors[failure.property] === undefined) {
        errors[failure.property] = inLabelWords(message, labels);
      }
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
