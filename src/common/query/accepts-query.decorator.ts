import { SetMetadata } from '@nestjs/common';

export const ACCEPTED_QUERY_KEY = 'accepted-query-parameters';

/** Paging parameters every list endpoint accepts. */
export const PAGING_PARAMETERS = ['limit', 'cursor', 'updated_after'] as const;

/**
 * Declares the query parameters a route accepts. A route without it accepts
 * none; anything undeclared is refused with `400 unsupported_parameter`.
 */
export const AcceptsQuery = (...names: string[]): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCEPTED_QUERY_KEY, names);
