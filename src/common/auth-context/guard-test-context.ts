import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import type { Listener } from '../http/listener';
import { markAdminRequest } from '../http/listener';

/** An execution context for guard specs: a request that matched `route` on `listener`. */
export function guardContext(
  route: string,
  listener: Listener,
  options: { headers?: Record<string, string>; handler?: () => void; controller?: new () => unknown } = {},
): ExecutionContextHost {
  const raw = {};
  if (listener === 'admin') markAdminRequest(raw as never);
  const request = { raw, routeOptions: { url: route }, headers: options.headers ?? {} };
  return new ExecutionContextHost(
    [request, {}],
    options.controller ?? class Controller {},
    options.handler ?? (() => undefined),
  );
}
