import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { isDashboardRoute, isPortalRoute } from './listener';

const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/** Whether a `Content-Type` names an urlencoded form, the body of every HTML form the pages post. */
export function isFormMediaType(contentType: string | undefined): boolean {
  return contentType !== undefined && FORM_MEDIA_TYPE.test(contentType);
}

/**
 * The `415` of a body in a media type its route does not read: every route
 * reads JSON, the dashboard's form routes urlencoded forms too, and the
 * portal's form routes urlencoded forms only (the portal's session check
 * refuses a JSON body there), so the message names what the route would
 * have taken.
 */
export function unsupportedBodyMediaType(route: string): DomainError {
  const message = isDashboardRoute(route)
    ? 'Forms are posted as application/x-www-form-urlencoded (or JSON).'
    : isPortalRoute(route)
      ? 'Forms are posted as application/x-www-form-urlencoded.'
      : 'Request bodies must be JSON (Content-Type: application/json).';
  return new DomainError(ErrorCode.InvalidArgument, message, { status: 415 });
}
