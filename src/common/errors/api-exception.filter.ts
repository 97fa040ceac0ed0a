import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { answerRefusal, HtmlSections, routeMissRefusal } from '../html/html-sections';
import { unsupportedBodyMediaType } from '../http/body-media-type';
import { listenerOf, pathOf } from '../http/listener';
import { RouteMiss } from '../http/route-miss';
import { RouteTable } from '../http/route-table';
import { databaseUnavailable, logServerFailure } from './database-unavailable';
import { DomainError } from './domain-error';
import type { ErrorBody } from './error-body';
import { ErrorCode } from './error-code';

interface Described {
  status: number;
  code: ErrorCode;
  message: string;
  headers: Record<string, string>;
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.InvalidArgument,
  401: ErrorCode.Unauthorized,
  403: ErrorCode.Forbidden,
  404: ErrorCode.NotFound,
  405: ErrorCode.MethodNotAllowed,
  409: ErrorCode.Conflict,
  412: ErrorCode.PreconditionFailed,
  413: ErrorCode.InvalidArgument,
  415: ErrorCode.InvalidArgument,
  429: ErrorCode.RateLimited,
};

/** The challenge of a 401 on each listener; the realm tells an API key's refusal from the admin token's. */
const BEARER_CHALLENGE = { public: 'Bearer realm="events-api"', admin: 'Bearer realm="events-api-internal"' } as const;

interface FastifyErrorLike {
  code: string;
  statusCode: number;
}

/** Fastify's own errors (body parsing, limits), whether Nest wrapped them in an HttpException or not. */
function fastifyErrorOf(exception: unknown): FastifyErrorLike | undefined {
  const candidates = [exception, exception instanceof Error ? exception.cause : undefined];
  for (const candidate of candidates) {
    const { code, statusCode } = (candidate ?? {}) as { code?: unknown; statusCode?: unknown };
    if (typeof code === 'string' && code.startsWith('FST_') && typeof statusCode === 'number') {
      return { code, statusCode };
    }
  }
  return undefined;
}

/**
 * Every failure leaves through here as `{error, message, request_id}`
 * (under a section of pages, the dashboard or the portal, as its HTML page):
 * domain errors, route misses (404, or 405 with `Allow` when the path exists
 * with other methods), Fastify's body-parsing errors, validation failures and
 * anything unexpected (a logged 500 that shows the caller nothing internal;
 * a 503 with `Retry-After` when the database lent no connection).
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(
    private readonly routes: RouteTable,
    private readonly sections: HtmlSections,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const described = this.describe(exception, request);
    logServerFailure(request.log, exception, described.status, 'request failed with an unexpected error');
    if (reply.sent) return;
    // Under the dashboard's or the portal's path the answer is that section's page (a route miss in people's words).
    const section = this.sections.of(request);
    if (section !== null) {
      const refusal = { status: described.status, message: described.message, headers: described.headers };
      return answerRefusal(
        section,
        request,
        reply,
        exception instanceof RouteMiss ? routeMissRefusal(refusal) : refusal,
      );
    }
    const body: ErrorBody = { error: described.code, message: described.message, request_id: String(request.id) };
    void reply.status(described.status).headers(described.headers);
    // HTTP requires a 401 to name the scheme that would be accepted (RFC 9110, 15.5.2): a bearer credential on both
    // listeners, an API key on the public one and the admin token on the other.
    if (described.status === 401) void reply.header('www-authenticate', BEARER_CHALLENGE[listenerOf(request.raw)]);
    void reply.send(body);
  }

  private describe(exception: unknown, request: FastifyRequest): Described {
    if (exception instanceof RouteMiss) return this.describeRouteMiss(request);
    if (exception instanceof DomainError) {
      return { status: exception.status, code: exception.code, message: exception.message, headers: exception.headers };
    }
    const fastifyError = fastifyErrorOf(exception);
    if (fastifyError !== undefined && fastifyError.statusCode < 500) return this.describeFastify(fastifyError, request);
    if (exception instanceof HttpException) return this.describeHttp(exception);
    const unavailable = databaseUnavailable(exception);
    if (unavailable !== null) return { ...unavailable, code: ErrorCode.Internal };
    return {
      status: 500,
      code: ErrorCode.Internal,
      message: 'The server failed to complete the request. Quote the request id when reporting it.',
      headers: {},
    };
  }

  private describeHttp(exception: HttpException): Described {
    const status = exception.getStatus();
    const code = CODE_BY_STATUS[status] ?? (status >= 500 ? ErrorCode.Internal : ErrorCode.InvalidArgument);
    if (status >= 500) {
      return { status, code: ErrorCode.Internal, message: 'The server failed to complete the request.', headers: {} };
    }
    return { status, code, message: exception.message, headers: {} };
  }

  private describeFastify({ code: fastifyCode, statusCode }: FastifyErrorLike, request: FastifyRequest): Described {
    const code = CODE_BY_STATUS[statusCode] ?? ErrorCode.InvalidArgument;
    const headers: Record<string, string> = {};
    switch (fastifyCode) {
      case 'FST_ERR_CTP_INVALID_JSON':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return { status: 400, code, message: 'The request body is not valid JSON.', headers };
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return { status: 400, code, message: 'The request body is empty but declared as JSON.', headers };
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return {
          status: 413,
          code,
          message: `The request body is larger than ${this.config.bodyLimitBytes} bytes.`,
          headers,
        };
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
        const refusal = unsupportedBodyMediaType(request.routeOptions.url ?? '');
        return { status: refusal.status, code: refusal.code, message: refusal.message, headers };
      }
      default:
        return { status: statusCode, code, message: 'The request could not be read.', headers };
    }
  }

  /** Raised by the conventions hook when no route of this listener matched the method and path. */
  private describeRouteMiss(request: FastifyRequest): Described {
    const path = pathOf(request.url);
    const allowed = this.routes.allowedMethods(path, listenerOf(request.raw));
    if (allowed.length > 0) {
      return {
        status: 405,
        code: ErrorCode.MethodNotAllowed,
        message: `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`,
        headers: { allow: allowed.join(', ') },
      };
    }
    return { status: 404, code: ErrorCode.NotFound, message: `No resource at ${path}.`, headers: {} };
  }
}
