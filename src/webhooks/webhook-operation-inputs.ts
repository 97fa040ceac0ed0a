import { parseInstant, parseInstantText } from '../../libs/time/instant';
import { DomainError } from '../common/errors/domain-error';
import { instantFieldText } from '../common/html/html-format';
import type { Page } from '../common/envelope/page';
import { ErrorCode } from '../common/errors/error-code';
import type { WebhookDeliveryResponseDto } from './dto/webhook.dto';
import {
  DEFAULT_GRACE_SECONDS,
  earlierGraceRuns,
  MAX_GRACE_SECONDS,
  type WebhookOperationsService,
} from './webhook-operations.service';

/**
 * Internal API bodies, read into the typed options of
 * WebhookOperationsService. Anything the contract does not allow is a
 * `400 invalid_argument` naming the field; an absent body means defaults.
 */
type Body = Record<string, unknown> | undefined | null;

function optionalBoolean(body: Body, name: string): boolean | undefined {
  const value = body?.[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw DomainError.invalidArgument(`${name} must be true or false.`);
  return value;
}

/** Years 0001 to 9999, as everywhere instants are read, so PostgreSQL never sees one it refuses. */
function instant(body: Body, name: string, required: boolean): Date | undefined {
  const value = body?.[name];
  if (value === undefined || value === null) {
    if (required) throw DomainError.invalidArgument(`${name} is required (ISO 8601 or epoch milliseconds).`);
    return undefined;
  }
  const parsed = parseInstant(value);
  const year = parsed?.getUTCFullYear() ?? 0;
  if (parsed === null || year < 1 || year > 9999) {
    throw DomainError.invalidArgument(`${name} must be an instant (ISO 8601 or epoch milliseconds).`);
  }
  return parsed;
}

export function readEnableOptions(body: Body): { recover?: boolean } {
  return { recover: optionalBoolean(body, 'recover') };
}

export function readResendOptions(body: Body): { force?: boolean } {
  return { force: optionalBoolean(body, 'force') };
}

export function readRecoverWindow(body: Body): { since: Date; until?: Date } {
  const since = instant(body, 'since', true) as Date;
  const until = instant(body, 'until', false);
  return until === undefined ? { since } : { since, until };
}

export function readRotateOptions(body: Body): { graceSeconds?: number } {
  const value = body?.['graceSeconds'];
  // The contract allows an integer or nothing ("anything else 400"): null is not a way to ask for the default.
  if (value === undefined) return {};
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_GRACE_SECONDS) {
    throw DomainError.invalidArgument(`graceSeconds must be a whole number from 0 to ${MAX_GRACE_SECONDS}.`);
  }
  return { graceSeconds: value };
}

/**
 * The same operations posted from an HTML form (the dashboard's and the
 * portal's): every field arrives as text, empty when left blank. A time may
 * also be written as the pages show one (`2026-11-23 18:00:00 UTC`).
 */
export function readRecoverWindowFields(
  sinceText: string | null,
  untilText: string | null,
): { since: Date; until?: Date } {
  const since = sinceText === null ? null : parseInstantText(instantFieldText(sinceText));
  const until = untilText === null ? undefined : parseInstantText(instantFieldText(untilText));
  if (since === null) {
    throw DomainError.invalidArgument(
      'Since must be an instant, e.g. 2026-11-23T18:00:00Z or 2026-11-23 18:00:00 UTC as the log shows times.',
    );
  }
  if (until === null) throw DomainError.invalidArgument('Until must be an instant, or left empty.');
  if (until !== undefined && until.getTime() < since.getTime()) {
    throw DomainError.invalidArgument('Until must not be before Since.');
  }
  return until === undefined ? { since } : { since, until };
}

/** A recovery window read from a form, or its refusal and the field it is shown beside. */
export type RecoverWindowForm =
  | { window: { since: Date; until?: Date }; refused?: undefined }
  | { refused: { field: 'since' | 'until'; error: DomainError } };

/**
 * readRecoverWindowFields for a form that shows a refusal beside its field:
 * Since is read alone first, so a refusal that names both (Until before
 * Since) is put on Until, the one to change.
 */
export function readRecoverWindowForm(sinceText: string | null, untilText: string | null): RecoverWindowForm {
  let field: 'since' | 'until' = 'since';
  try {
    readRecoverWindowFields(sinceText, null);
    field = 'until';
    return { window: readRecoverWindowFields(sinceText, untilText) };
  } catch (error) {
    if (!(error instanceof DomainError) || error.status >= 500) throw error;
    return { refused: { field, error } };
  }
}

/**
 * A form's grace period ("Seconds the current secret keeps signing"): blank
 * is the default; anything but a whole number from 0 to 604800 is refused
 * in the words of the form's label, not the JSON API's field name.
 */
export function readGraceSecondsField(graceText: string | null): number {
  if (graceText === null) return DEFAULT_GRACE_SECONDS;
  const graceSeconds = /^\d{1,7}$/.test(graceText) ? Number(graceText) : NaN;
  if (!(graceSeconds <= MAX_GRACE_SECONDS)) {
    throw DomainError.invalidArgument(
      `Seconds the current secret keeps signing must be a whole number from 0 to ${MAX_GRACE_SECONDS}.`,
    );
  }
  return graceSeconds;
}

/** A delivery id as a cursor of the delivery log names it: what the internal API and the pages accept. */
export const DELIVERY_CURSOR = /^[\w-]{1,100}$/;

/** What a page says when its "Older deliveries" link names no delivery of the subscription any more. */
export const OLDER_DELIVERIES_LINK_OUT_OF_DATE =
  'This "Older deliveries" link is out of date: the delivery it continues from is no longer in this subscription\'s log. Start again from the newest deliveries.';

/**
 * The page of a subscription's delivery log a dashboard or portal page
 * shows: the newest, or those before `before` (the cursor its "Older
 * deliveries" link carries). A cursor the log refuses is said in the page's
 * own words; the internal API keeps its message about `cursor`.
 */
export async function deliveryLogPage(
  operations: Pick<WebhookOperationsService, 'deliveryPage'>,
  webhookId: string,
  before: string | undefined,
  size: number,
): Promise<Page<WebhookDeliveryResponseDto>> {
  // Of any other shape (a NUL, which PostgreSQL's text cannot hold), it names no delivery: checked before any query.
  if (before !== undefined && !DELIVERY_CURSOR.test(before)) {
    throw DomainError.invalidArgument(OLDER_DELIVERIES_LINK_OUT_OF_DATE);
  }
  try {
    return await operations.deliveryPage(webhookId, { cursor: before, size });
  } catch (error) {
    if (before !== undefined && error instanceof DomainError && error.code === ErrorCode.InvalidArgument) {
      throw DomainError.invalidArgument(OLDER_DELIVERIES_LINK_OUT_OF_DATE);
    }
    throw error;
  }
}

/**
 * Refuses, on a page's form, a rotation with no grace period whose confirm
 * box (`confirmNoGrace`) is not ticked: every receiver not yet switched would
 * fail at once, so it is said twice, never by a slip.
 */
export function assertNoGraceConfirmed(graceSeconds: number, confirmed: boolean): void {
  if (graceSeconds === 0 && !confirmed) {
    throw DomainError.invalidArgument(
      'With 0 seconds the current secret stops signing at once and every receiver not yet switched fails: tick the box to confirm, or give a grace period.',
    );
  }
}

/**
 * Refuses, on a page's form, a rotation while the secret replaced by
 * the last one still signs (`previousExpiresAt`, from the webhook's
 * `secretRotation`) and the confirm box is not ticked: at most two secrets
 * sign at a time, so that older secret stops at once, whatever grace the new
 * rotation gives, and every receiver still on it fails. The internal API
 * rotates as its contract says, without asking.
 */
export function assertGraceEndConfirmed(previousExpiresAt: string | null, confirmed: boolean): void {
  if (previousExpiresAt !== null && !confirmed) throw earlierGraceRuns(previousExpiresAt);
}

/** A rotation read from a form, or its refusal and the field it is shown beside (the seconds, or the box). */
export type RotateSecretForm =
  | { graceSeconds: number; refused?: undefined }
  | { refused: { field: 'grace' | 'confirm'; error: DomainError } };

/**
 * A rotation's form (the dashboard's and the portal's): the seconds typed,
 * then its "I mean it" box (`confirmNoGrace`), which a grace of 0 or a
 * secret replaced by the last rotation still signing (`previousExpiresAt`)
 * needs ticked. A refusal for the box left unticked is put on the box, not
 * on the seconds: they are what was meant, the box is what to change.
 */
export function readRotateSecretForm(
  graceText: string | null,
  confirmed: boolean,
  previousExpiresAt: string | null,
): RotateSecretForm {
  let field: 'grace' | 'confirm' = 'grace';
  try {
    const graceSeconds = readGraceSecondsField(graceText);
    field = 'confirm';
    assertNoGraceConfirmed(graceSeconds, confirmed);
    assertGraceEndConfirmed(previousExpiresAt, confirmed);
    return { graceSeconds };
  } catch (error) {
    if (!(error instanceof DomainError) || error.status >= 500) throw error;
    return { refused: { field, error } };
  }
}

/** What a page says after a recovery. */
export function recoveredMessage(result: { queued: number; remaining: number }): string {
  return `${result.queued} deliveries queued again${result.remaining > 0 ? `; ${result.remaining} more remain (recover again)` : ''}.`;
}

/**
 * Where an action posted from a page of the delivery log returns
 * (Post/Redirect/Get): to that page, so its result is in view. The form
 * carries the page's cursor (`before`); it is kept only when the log accepts
 * it as the page itself does, and the address is built here from the page's
 * own path and that cursor, percent-encoded, so no form can send the browser
 * anywhere else. Without a usable cursor it is the newest page.
 */
export async function pageAfterAction(
  operations: Pick<WebhookOperationsService, 'deliveryPage'>,
  webhookId: string,
  pagePath: string,
  beforeText: string | null,
): Promise<string> {
  if (beforeText === null) return pagePath;
  try {
    await deliveryLogPage(operations, webhookId, beforeText, 1);
  } catch (error) {
    if (error instanceof DomainError && error.status < 500) return pagePath;
    throw error;
  }
  return `${pagePath}?before=${encodeURIComponent(beforeText)}`;
}
