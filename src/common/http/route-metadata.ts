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
