import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { OnceReadReflector, routeMetadata } from './route-metadata';

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

describe('OnceReadReflector', () => {
  it('gives the plain Reflector’s answers, handler before controller, and walks each handler and key once', () => {
    const plain = new Reflector();
    const once = new OnceReadReflector();
    let walks = 0;
    const readOne = once.get.bind(once) as (key: string, target: object) => unknown;
    once.get = ((key: string, target: object) => {
      walks += 1;
      return readOne(key, target);
    }) as Reflector['get'];
    for (let request = 0; request < 3; request += 1) {
      for (const handler of [list, get]) {
        for (const key of ['probe', 'absent']) {
          assert.equal(
            once.getAllAndOverride(key, [handler, ProbeController]),
            plain.getAllAndOverride(key, [handler, ProbeController]),
          );
        }
      }
    }
    // First request only: list/probe stops at the handler (1), get/probe reaches the controller (2), absent keys walk both (2 + 2).
    assert.equal(walks, 7);
  });
});
