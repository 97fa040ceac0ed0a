import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { routeMetadata } from './route-metadata';

class ProbeController {}
const list = (): void => undefined;
const get = (): void => undefined;
Reflect.defineMetadata('probe', 'on list', list);
Reflect.defineMetadata('probe', 'on the controller', ProbeController);

function contextOf(handler: () => void): ExecutionContext {
  return { getHandler: () => handler, getClass: () => ProbeController } as unknown as ExecutionContext;
}

describe('routeMetadata', () => {
  it('reads each handler’s metadata through the Reflector once, not on every request', () => {
    const reflector = new Reflector();
    let walks = 0;
    const read = reflector.getAllAndOverride.bind(reflector);
    reflector.getAllAndOverride = ((key: string, targets: Parameters<Reflector['getAllAndOverride']>[1]) => {
      walks += 1;
      return read(key, targets);
    }) as Reflector['getAllAndOverride'];
    const probeOf = routeMetadata<string>(reflector, 'probe');
    for (let request = 0; request < 3; request += 1) {
      assert.equal(probeOf(contextOf(list)), 'on list');
      assert.equal(probeOf(contextOf(get)), 'on the controller');
    }
    assert.equal(walks, 2);
  });
});
