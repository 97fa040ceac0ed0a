import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { RouteCatalogue } from './route-catalogue';
import { RouteTable } from './route-table';

/** The route table (filled by Fastify as routes register) and the catalogue built from controller metadata. */
@Global()
@Module({})
export class HttpModule {
  static forRoot(routes: RouteTable): DynamicModule {
    return {
      module: HttpModule,
      imports: [DiscoveryModule],
      providers: [{ provide: RouteTable, useValue: routes }, RouteCatalogue],
      exports: [RouteTable, RouteCatalogue],
    };
  }
}
