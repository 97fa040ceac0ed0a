import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/**
 * A decorator's value for the route being served (handler first, then its
 * controller), read once per handler: decorators are fixed when the
 * application starts, so the Reflector walk need not run on every request.
 */
export function routeMetadata<T>(reflector: Reflector, key: string): (context: ExecutionContext) => T | undefined {
  const byHandler = new WeakMap<object, { value: T | undefined }>();
  return (context) => {
    const handler = context.getHandler();
    let entry = byHandler.get(handler);
    if (entry === undefined) {
      entry = { value: reflector.getAllAndOverride<T | undefined>(key, [handler, context.getClass()]) };
      byHandler.set(handler, entry);
    }
    return entry.value;
  };
}

/**
 * A Reflector for code that walks `[handler, controller]` on every request
 * and cannot be given `routeMetadata` (a library's guard, such as
 * @nestjs/throttler's, which reads six decorators per throttler per request):
 * `getAllAndOverride` over a handler and its controller is read once per
 * key, with the same answer the plain Reflector gives.
 */
export class OnceReadReflector extends Reflector {
  private readonly byHandler = new WeakMap<object, WeakMap<object, Map<unknown, unknown>>>();

  override getAllAndOverride<T = unknown>(key: unknown, targets: Parameters<Reflector['getAllAndOverride']>[1]): T {
    const [handler, controller] = targets;
    if (targets.length !== 2 || handler === undefined || controller === undefined) {
      return super.getAllAndOverride<T>(key as string, targets);
    }
    let byController = this.byHandler.get(handler);
    if (byController === undefined) this.byHandler.set(handler, (byController = new WeakMap()));
    let values = byController.get(controller);
    if (values === undefined) byController.set(controller, (values = new Map()));
    if (!values.has(key)) values.set(key, super.getAllAndOverride(key as string, targets));
    return values.get(key) as T;
  }
}
