import { AsyncLocalStorage } from 'node:async_hooks';
import { newTraceId } from '../../../libs/trace/trace-context';

interface RequestContext {
  requestId: string;
  /** W3C trace id: the caller's `traceparent`, or one started for this request; webhooks it causes carry it. */
  traceId?: string;
}

/**
 * The request a piece of code runs for, without passing it down: log lines
 * written through Nest's Logger from services then carry the request id too.
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** The caller's trace id, else one started for this request on first use (so most requests never pay for one). */
export function currentTraceId(): string | undefined {
  const store = requestContext.getStore();
  if (store === undefined) return undefined;
  store.traceId ??= newTraceId();
  return store.traceId;
}
