import type { FastifyInstance } from 'fastify';
import { HEALTH_PATHS } from '../../health/health-paths';
import { recordAnsweredRequest } from '../../metrics/service-metrics';
import { DomainError } from '../errors/domain-error';
import { ErrorCode } from '../errors/error-code';
import { listenerForPath, listenerOf, pathOf } from './listener';
import type { RouteTable } from './route-table';
import { requestContext } from '../request-id/request-context';
import { REQUEST_ID_HEADER } from '../request-id/request-id';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null || depth > 32) return false;
  for (const [key, nested] of Object.entries(value)) {
    if (key.includes('\u0000') || containsNul(nested, depth + 1)) return true;
  }
  return false;
}

/**
 * Conventions that must hold before any Nest code runs, so they also cover
 * 401, 404, 405 and 429 answers and the routes Nest does not own
 * (`/openapi.json`, `/docs`):
 * - every route is recorded in the route table (405 `Allow`, `GET /v1`);
 * - `X-Request-Id` is set first thing (the id itself comes from `genReqId`);
 * - each listener answers only its own paths, anything else is 404;
 * - a JSON body must be an object.
 */
export function installHttpConventions(fastify: FastifyInstance, routes: RouteTable): void {
  fastify.addHook('onRoute', (route) => {
    routes.record(route.method, route.url ?? route.path);
  });

  // Everything after this hook (guards, services, their log lines) runs inside the request's context.
  fastify.addHook('onRequest', (request, _reply, done) => {
    requestContext.run({ requestId: String(request.id) }, done);
  });

  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, String(request.id));
    // Every body is JSON (or the reference page); browsers must not guess otherwise.
    void reply.header('x-content-type-options', 'nosniff');
    const path = pathOf(request.url);
    // Probes answer on both listeners (TODO(listener split): fold into the split's "both" paths).
    if (!HEALTH_PATHS.includes(path) && listenerForPath(path) !== listenerOf(request.raw)) {
      throw new DomainError(ErrorCode.NotFound, `No resource at ${pathOf(request.url).slice(0, 200)}.`);
    }
  });

  fastify.addHook('preValidation', async (request) => {
    // PostgreSQL text cannot hold NUL; refusing it here keeps it from ever reaching SQL as a 500.
    if (containsNul(request.params) || containsNul(request.body)) {
      throw DomainError.invalidArgument('Text must not contain the NUL character (\\u0000).');
    }
    if (!BODY_METHODS.has(request.method) || request.body === undefined) return;
    const contentType = request.headers['content-type'] ?? '';
    if (!JSON_MEDIA_TYPE.test(contentType)) {
      throw new DomainError(
        ErrorCode.InvalidArgument,
        'Request bodies must be JSON (Content-Type: application/json).',
        {
          status: 415,
        },
      );
    }
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw DomainError.invalidArgument('The request body must be a JSON object.');
    }
  });

  // The one place requests are timed and counted (by route pattern, never the raw path).
  fastify.addHook('onResponse', async (request, reply) => {
    recordAnsweredRequest({
      method: request.method,
      routePattern: request.routeOptions.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      accountBudget: reply.hasHeader('x-ratelimit-limit'),
    });
    request.log.info(
      {
        method: request.method,
        url: pathOf(request.url),
        statusCode: reply.statusCode,
        responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  });
}
