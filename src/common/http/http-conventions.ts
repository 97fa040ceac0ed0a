import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAnsweredRequest } from './http-metrics';
import { framingRefusal } from './request-framing';
import { DomainError } from '../errors/domain-error';
import type { Admission, ClientFailureBudget } from '../rate-limit/client-failure-budget';
import { authContextOf } from '../auth-context/auth.decorator';
import { isFormMediaType, unsupportedBodyMediaType } from './body-media-type';
import { acceptsFormBodies, audienceOfRequest, listenerOf, pathOf } from './listener';
import { RouteMiss } from './route-miss';
import type { RouteTable } from './route-table';
import { REQUEST_ID_HEADER } from '../request-id/request-id';
import { accessLogOf } from '../logging/access-log';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

const ROUTE_MISSED = Symbol('route-missed');
const FAILURE_BUDGET_REFUSED = Symbol('failure-budget-refused');
const ADMISSION = Symbol('failure-budget-admission');
const OUTCOME_COUNTED = Symbol('failure-budget-outcome-counted');
type MarkedRequest = FastifyRequest & {
  [ROUTE_MISSED]?: true;
  [FAILURE_BUDGET_REFUSED]?: true;
  [ADMISSION]?: Admission;
  [OUTCOME_COUNTED]?: true;
};

/**
 * Conventions that must hold before any Nest code runs, so they also cover
 * 401, 404, 405 and 429 answers and the routes Nest does not own
 * (`/openapi.json`, `/docs`):
 * - every route is recorded in the route table (405 `Allow`, `GET /v1`);
 * - `X-Request-Id` is set first thing (the id itself comes from `genReqId`);
 * - a client over its failure budget is refused before anything else, and
 *   every request it lets in is settled once its outcome is known; on the
 *   admin listener a request carrying the valid admin token is never refused
 *   (`isAdminToken`, see below);
 * - each listener answers only the routes it serves, decided by the route
 *   the router matched (after decoding and normalising the URL), never by
 *   the URL's text; anything else is a route miss, answered before the body
 *   is read;
 * - a JSON body must be an object.
 * The hooks take Fastify's `done` rather than being async: none awaits
 * anything, and an async hook costs a promise and a microtask per request.
 */
export function installHttpConventions(
  fastify: FastifyInstance,
  routes: RouteTable,
  failures: ClientFailureBudget,
  isAdminToken: (authorization: string | undefined) => boolean,
): AnswerRecorder {
  fastify.addHook('onRoute', (route) => {
    routes.record(route.method, route.url ?? route.path);
  });

  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, String(request.id));
    // Every body is JSON (or the reference page); browsers must not guess otherwise.
    void reply.header('x-content-type-options', 'nosniff');
    // RFC 9112's framing and Host rules Node lets through (its own Host check is off: its 400 has no body); the
    // listener's server has marked the connection to close after the answer (closeAfterUntrustedFraming).
    const refusal = framingRefusal(request.raw);
    if (refusal !== null) throw DomainError.invalidArgument(refusal);
    const audience = audienceOfRequest(request);
    const listener = listenerOf(request.raw);
    // The probes and the reference stay reachable: a load balancer must see health whatever a client did.
    // A request with the valid admin token is no guess, and telling so is an in-memory constant-time compare:
    // the operators and the metrics scrape behind a guesser's address keep the internal API. It holds no unit,
    // and whatever it fails still counts (recordFailure). Not so on the public listener, where a key's validity
    // costs a database read, the very cost the budget spares.
    const passes = listener === 'admin' && isAdminToken(request.headers.authorization);
    if (audience?.credential !== 'none' && !passes) {
      try {
        const admission = failures.admit(listener, request.ip, request.headers.authorization);
        if (admission !== null) (request as MarkedRequest)[ADMISSION] = admission;
      } catch (refusal) {
        (request as MarkedRequest)[FAILURE_BUDGET_REFUSED] = true;
        throw refusal;
      }
    }
    // The router lets a path parameter be empty (`/v1/events/` matches `/v1/events/:eventId`); no route means that.
    const emptyParameter = Object.values((request.params ?? {}) as Record<string, unknown>).some(
      (value) => value === '',
    );
    if (audience === null || emptyParameter || !audience.listeners.includes(listener)) {
      (request as MarkedRequest)[ROUTE_MISSED] = true;
      throw new RouteMiss();
    }
    done();
  });

  // Past the onRequest hooks an accepted API key is settled: it was the last way for the request to fail the budget.
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const admission = (request as MarkedRequest)[ADMISSION];
    if (admission?.holdsUnit === true && authContextOf(request) !== undefined) failures.settle(admission, false);
    done(null, payload);
  });

  // The answer is decided when it is sent, even to a client that has gone: an aborted guess still costs the guesser.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    countOutcome(request, reply.statusCode, failures);
    done(null, payload);
  });

  fastify.addHook('preValidation', (request, _reply, done) => {
    assertJsonObjectBody(request);
    done();
  });

  // The one place requests are timed, counted (by route pattern, never the raw path) and logged.
  const logAccess = accessLogOf(fastify.log);
  const recordAnswer: AnswerRecorder = (request, reply) => {
    const marked = request as MarkedRequest;
    // Settled in onSend already, unless the reply skipped it.
    countOutcome(request, reply.statusCode, failures);
    recordAnsweredRequest({
      method: request.method,
      routePattern: request.routeOptions.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      // Both budgets' 429s carry the X-RateLimit-* headers; only the failure budget marks its refusals.
      accountBudget: reply.hasHeader('x-ratelimit-limit') && marked[FAILURE_BUDGET_REFUSED] !== true,
    });
    logAccess(
      {
        reqId: String(request.id),
        method: request.method,
        url: pathOf(request.url),
        statusCode: reply.statusCode,
        responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      },
      request.log,
    );
  };
  fastify.addHook('onResponse', (request, reply, done) => {
    recordAnswer(request, reply);
    done();
  });
  return recordAnswer;
}

/**
 * Times, counts and logs an answered request: the `onResponse` hook's work,
 * also done for the router's own refusals (framework-errors.ts), which no
 * hook sees.
 */
export type AnswerRecorder = (request: FastifyRequest, reply: FastifyReply) => void;

/** Settles the request with the failure budget, once: answers of `401` and route misses are failures. */
function countOutcome(request: FastifyRequest, statusCode: number, failures: ClientFailureBudget): void {
  const marked = request as MarkedRequest;
  if (marked[OUTCOME_COUNTED] === true) return;
  marked[OUTCOME_COUNTED] = true;
  const failed = statusCode === 401 || marked[ROUTE_MISSED] === true;
  const admission = marked[ADMISSION];
  if (admission !== undefined) failures.settle(admission, failed);
  else if (failed) failures.recordFailure(listenerOf(request.raw), request.ip);
}

/** A body of a write must be JSON (the dashboard's forms excepted), and a JSON body must be an object. */
function assertJsonObjectBody(request: FastifyRequest): void {
  // NUL and lone surrogates in bodies, path parameters and query values: see installJsonBodyParser.
  if (!BODY_METHODS.has(request.method) || request.body === undefined) return;
  const contentType = request.headers['content-type'] ?? '';
  // The dashboard's and the portal's HTML forms post urlencoded bodies; nothing else may.
  if (isFormMediaType(contentType) && acceptsFormBodies(request.routeOptions.url ?? '')) return;
  if (!JSON_MEDIA_TYPE.test(contentType)) throw unsupportedBodyMediaType(request.routeOptions.url ?? '');
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw DomainError.invalidArgument('The request body must be a JSON object.');
  }
}
