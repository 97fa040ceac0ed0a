import { Controller, Get, Post } from '@nestjs/common';
import { MetadataScanner, type DiscoveryService } from '@nestjs/core';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequireAccess } from '../auth-context/require-access.decorator';
import { RouteCatalogue } from './route-catalogue';

@Controller('v1/widgets')
class WidgetsController {
  @Get()
  @RequireAccess({ scope: 'events:read', principals: ['organiser'] })
  list(): void {}

  /** Forgot @RequireAccess: must be reported so the service refuses to start. */
  @Post()
  create(): void {}
}

@Controller('internal/widgets')
class WidgetsInternalController {
  @Post()
  create(): void {}
}

function catalogueOf(...controllers: Array<new () => object>): RouteCatalogue {
  const discovery = {
    getControllers: () => controllers.map((type) => ({ instance: new type(), metatype: type })),
  } as unknown as DiscoveryService;
  return new RouteCatalogue(discovery, new MetadataScanner());
}

describe('RouteCatalogue', () => {
  it('reports a public API route without @RequireAccess, so start-up refuses it (fail closed)', () => {
    const open = catalogueOf(WidgetsController, WidgetsInternalController).routesWithoutAccess();
    assert.deepEqual(
      open.map((route) => `${route.method} ${route.path}`),
      ['POST /v1/widgets'],
    );
  });

  it('lists only public API routes, with the access each declares', () => {
    const routes = catalogueOf(WidgetsController, WidgetsInternalController).publicRoutes();
    assert.deepEqual(
      routes.map((route) => [route.method, route.path, route.access?.scope]),
      [
        ['GET', '/v1/widgets', 'events:read'],
        ['POST', '/v1/widgets', undefined],
      ],
    );
  });
});
