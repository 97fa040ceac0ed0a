import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { acceptsFormBodies } from './listener';

/**
 * The `415` of a body in a media type its route does not read: every route
 * reads JSON, and the dashboard's and the portal's form routes urlencoded
 * forms too, so the message names what the route would have taken.
 */
export function unsupportedBodyMediaType(route: string): DomainError {
  const message = acceptsFormBodies(route)
    ? 'Forms are posted as application/x-www-form-urlencoded (or JSON).'
    : 'Request bodies must be JSON (Content-Type: application/json).';
  return new DomainError(ErrorCode.InvalidArgument, message, { status: 415 });
}
