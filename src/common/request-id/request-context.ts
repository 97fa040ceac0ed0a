import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { newTraceId, traceIdFromTraceparent } from '../../../libs/trace/trace-context';

/**
 * The request a piece of work runs for, passed down explicitly to the
 * services that need it: the request id their log lines carry, and the
 * trace their webhooks continue.
 *
 * Explicit rather than an AsyncLocalStorage: on Node 20 the storage turns on
 * async hooks for every promise of the process, a cost on every request (the
 * side-by-side bench shows it), for two values only a few write paths read.
 */
export interface RequestContext {
  readonly requestId: string;
  /** W3C trace id: the caller's `traceparent`, or one started for this request. */
  readonly traceId: string;
}

export function requestContextOf(request: FastifyRequest): RequestContext {
  return {
    requestId: String(request.id),
    traceId: traceIdFromTraceparent(request.headers.traceparent) ?? newTraceId(),
  };
}

/** The handler's {@link RequestContext}, for routes whose work logs or publishes domain events. */
export const InRequest = createParamDecorator((_data: unknown, context: ExecutionContext): RequestContext =>
  requestContextOf(context.switchToHttp().getRequest<FastifyRequest>()),
);
