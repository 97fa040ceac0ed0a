import { HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailable } from '../errors/database-unavailable';
import { DomainError } from '../errors/domain-error';

/**
 * `303 See Other`: the answer to every form post (a reload shows the page
 * again and never repeats the action) and to a page without the session it
 * needs. An htmx request gets `200` with `HX-Redirect` instead, so the whole
 * page moves rather than the fragment htmx would swap in.
 */
export function seeOther(request: FastifyRequest, reply: FastifyReply, location: string): void {
  if (request.headers['hx-request'] === 'true') void reply.status(200).header('hx-redirect', location).send('');
  else void reply.status(303).header('location', location).send('');
}

/** What an HTML page says for a thrown error. */
export interface PageRefusal {
  status: number;
  message: string;
  /** The domain error, when it was one: its code and headers (a 429's `Retry-After`) are the page's too. */
  domainError: DomainError | null;
  /** The page's headers (a domain error's, or a 503's `Retry-After`). */
  headers: Record<string, string>;
}

/**
 * A domain error's status and message, or a 4xx's, as the JSON API would
 * give them; the JSON API's `503` when the database lent no connection;
 * anything else is a 500 with `unexpected`, which tells nothing internal.
 */
export function pageRefusal(exception: unknown, unexpected: string): PageRefusal {
  if (exception instanceof DomainError) {
    return { status: exception.status, message: exception.message, domainError: exception, headers: exception.headers };
  }
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    return { status: exception.getStatus(), message: exception.message, domainError: null, headers: {} };
  }
  const unavailable = databaseUnavailable(exception);
  if (unavailable !== null) return { ...unavailable, domainError: null };
  return { status: 500, message: unexpected, domainError: null, headers: {} };
}
