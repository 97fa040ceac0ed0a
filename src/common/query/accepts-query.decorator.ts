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

/** The metadata of `IgnoresQuery()`: any parameter passes, and none is read. */
export const ANY_QUERY_PARAMETERS: readonly string[] = Object.freeze([]);

/**
 * For a page people reach through links that others rewrite (a mail
 * tracker's `utm_*`, a configured base address with a query of its own):
 * whatever query it is given is ignored rather than refused. The route must
 * read nothing from the query.
 */
export const IgnoresQuery = (): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCEPTED_QUERY_KEY, ANY_QUERY_PARAMETERS);
