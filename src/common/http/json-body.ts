import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { scan as refusePrototypePoisoning } from 'secure-json-parse';
import { jsonShapeProblem, jsonTextShapeProblem, unstorableTextProblem } from '../../../libs/json/json-shape';
import type { AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { unsupportedBodyMediaType } from './body-media-type';
import { audienceOfRoute, acceptsFormBodies } from './listener';

/** Bodies of DELETE requests: at most `{"actorRole": "org_manager"}`. */
export const SMALL_BODY_LIMIT = 1024;
/** Bodies of a handful of short fields (a webhook subscription, an organiser, a key). */
export const FORM_BODY_LIMIT = 16 * 1024;

/**
 * What each write route needs, never more than BODY_LIMIT_BYTES. Event and
 * order writes (free-form objects up to 64 KiB each, line items) get the full
 * BODY_LIMIT_BYTES; anything not listed gets it too, but the pages' routes.
 */
function routeBodyLimit(method: string, url: string, configured: number): number {
  if (method === 'DELETE') return Math.min(SMALL_BODY_LIMIT, configured);
  // The dashboard's and the portal's pages post short forms (and the portal's link, a short JSON body), read
  // before their session is checked: no more than a form's limit, in any media type.
  if (acceptsFormBodies(url)) return Math.min(FORM_BODY_LIMIT, configured);
  if (method === 'POST' && ['/v1/webhooks', '/internal/organisers', '/internal/keys'].includes(url)) {
    return Math.min(FORM_BODY_LIMIT, configured);
  }
  if (method === 'POST' && url === '/internal/venues/:venueId/locations') return Math.min(FORM_BODY_LIMIT, configured);
  return configured;
}

/**
 * Bodies parsed for an internal route (matched route under `/internal/`).
 * Only these may be handed to class-transformer (see the validation pipe):
 * every other body is validated as a plain object.
 */
const internalRouteBodies = new WeakSet<object>();

export function isInternalRouteBody(value: unknown): boolean {
  return typeof value === 'object' && value !== null && internalRouteBodies.has(value);
}

/** An operator's body given outside HTTP (the ops CLI), trusted as an internal route's is; checked for shape first. */
export function acceptAsInternalBody<T extends object>(value: T): T {
  const problem = jsonShapeProblem(value);
  if (problem !== null) throw DomainError.invalidArgument(problem);
  internalRouteBodies.add(value);
  return value;
}

/**
 * The routes on which an empty JSON body counts as no body: their handlers
 * take none, or take an optional one (read from the handlers' metadata once
 * the application is built, before it listens). Clients that declare
 * `Content-Type: application/json` on every request (a DELETE included) are
 * then answered as if they had sent no header. Until `accept` runs, and for
 * any route it was not given, an empty JSON body is refused.
 * The dashboard's and the portal's handlers read their forms from the
 * request itself, which the metadata cannot show, so their routes always keep
 * the refusal.
 */
export class EmptyBodyRoutes {
  private routes: ReadonlySet<string> = new Set();

  /** `METHOD /path/:param` of every route whose handler does not require a body. */
  accept(routes: Iterable<string>): void {
    this.routes = new Set(routes);
  }

  emptyMeansNone(method: string, route: string): boolean {
    return !acceptsFormBodies(route) && this.routes.has(`${method} ${route}`);
  }
}

function tooLarge(limit: number): DomainError {
  return new DomainError(ErrorCode.InvalidArgument, `The request body is larger than ${limit} bytes.`, { status: 413 });
}

/** Reads the payload up to `limit` bytes, refusing early on a declared length over it. */
function readBody(request: FastifyRequest, payload: Readable, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (declared > limit) {
      reject(tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanUp = (): void => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit) {
        cleanUp();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = (): void => {
      cleanUp();
      if (!Number.isNaN(declared) && received !== declared) {
        reject(DomainError.invalidArgument('The request body is shorter than its Content-Length.'));
        return;
      }
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (error: Error): void => {
      cleanUp();
      reject(Object.assign(error, { statusCode: 400 }));
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  });
}

/** JSON text to a value within the structural limits, or a `400 invalid_argument` naming the problem. */
export function parseJsonBody(bytes: Buffer): unknown {
  // Decoding would silently turn each invalid byte into U+FFFD and store that in place of what was sent.
  if (!isUtf8(bytes)) {
    throw DomainError.invalidArgument('The request body is not valid UTF-8, the only encoding of JSON text.');
  }
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) throw DomainError.invalidArgument('The request body is empty but declared as JSON.');
  // Refuses what would be costly to parse (deep, wide, many values) from the bytes, in one pass.
  const textProblem = jsonTextShapeProblem(bytes);
  if (textProblem !== null) throw DomainError.invalidArgument(textProblem);
  let value: unknown;
  try {
    // V8's JSON.parse is iterative: nesting depth cannot overflow the stack here.
    value = JSON.parse(text);
  } catch {
    throw DomainError.invalidArgument('The request body is not valid JSON.');
  }
  const problem = jsonShapeProblem(value);
  if (problem !== null) throw DomainError.invalidArgument(problem);
  if (typeof value === 'object' && value !== null) {
    try {
      // Fastify's own protection (secure-json-parse), run on a value already known to be small.
      refusePrototypePoisoning(value, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      throw DomainError.invalidArgument(
        'The request body must not contain a "__proto__" or "constructor.prototype" key.',
      );
    }
  }
  return value;
}

/**
 * Path parameters reach SQL as text: NUL and lone surrogates are refused as
 * in bodies. Query values are not checked here: the API's are parsed first
 * (cursor, updated_after and limit, refused with their own codes, such as
 * `invalid_cursor`, when they do not parse), and the one that reaches SQL as
 * text, the dashboard's search, is checked by its handler.
 */
function pathTextProblem(request: FastifyRequest): string | null {
  const params = request.params;
  if (typeof params !== 'object' || params === null) return null;
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    const problem = unstorableTextProblem(value);
    if (problem !== null) return `Path parameter ${name.slice(0, 40)} ${problem}.`;
  }
  return null;
}

/**
 * A urlencoded form as an object; a repeated field (checkboxes) becomes an
 * array of its values, in order. One pass, each value appended in place: the
 * portal's forms are parsed before any session is checked, so a body of one
 * name repeated thousands of times must cost what a body of distinct names
 * does (`npm run bench -- hostile-body`).
 */
export function parseFormBody(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    // Same protection as the JSON parser's: no field may reach an object's prototype.
    if (name === '__proto__' || name === 'constructor' || name === 'prototype') continue;
    const existing = fields[name];
    if (existing === undefined) fields[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else fields[name] = [existing, value];
  }
  return fields;
}

/**
 * The one JSON body parser, in place of Fastify's (and Nest's, which must be
 * created with `bodyParser: false`):
 * - each route reads at most what it needs (`bodyLimit` set per route here);
 * - a request that matched no route (404, 405) never has its body read;
 * - the parsed value passes one bounded structural check (depth, keys,
 *   values, string length, NUL and lone surrogates) before anything else;
 * - bodies of internal routes are remembered so that only they may meet class-transformer;
 * - an empty body on a route whose handler needs none is no body (`EmptyBodyRoutes`).
 * A urlencoded form is read only on the dashboard's and the portal's routes
 * (below); any other media type has no parser, so Fastify answers 415 without reading it.
 */
export function installJsonBodyParser(fastify: FastifyInstance, config: AppConfig, emptyBodies: EmptyBodyRoutes): void {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const url = route.url;
    if (route.bodyLimit === undefined) {
      route.bodyLimit = Math.min(...methods.map((method) => routeBodyLimit(method, url, config.bodyLimitBytes)));
    }
  });

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', (request, payload, done) => {
    // Not found (or a method the path does not allow): answered without reading or parsing the body.
    if (request.is404) {
      done(null, undefined);
      return;
    }
    const limit = request.routeOptions.bodyLimit ?? config.bodyLimitBytes;
    readBody(request, payload, limit).then(
      (bytes) => {
        const route = request.routeOptions.url ?? '';
        if (bytes.length === 0 && emptyBodies.emptyMeansNone(request.method, route)) {
          done(null, undefined);
          return;
        }
        let value: unknown;
        try {
          value = parseJsonBody(bytes);
        } catch (error) {
          done(error as Error, undefined);
          return;
        }
        if (typeof value === 'object' && value !== null && audienceOfRoute(route).credential === 'admin-token') {
          internalRouteBodies.add(value);
        }
        done(null, value);
      },
      (error: Error) => done(error, undefined),
    );
  });

  // The dashboard's and the portal's HTML forms post urlencoded bodies; no other route has a parser for them (415).
  fastify.addContentTypeParser('application/x-www-form-urlencoded', (request, payload, done) => {
    const route = request.routeOptions.url ?? '';
    if (!acceptsFormBodies(route)) {
      done(unsupportedBodyMediaType(route), undefined);
      return;
    }
    readBody(request, payload, Math.min(FORM_BODY_LIMIT, config.bodyLimitBytes)).then(
      (bytes) => done(null, parseFormBody(bytes.toString('utf8'))),
      (error: Error) => done(error, undefined),
    );
  });

  fastify.addHook('preValidation', (request, _reply, done) => {
    const problem = pathTextProblem(request);
    if (problem !== null) throw DomainError.invalidArgument(problem);
    done();
  });
}
