import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { HtmlSections } from '../html/html-sections';
import { RouteCatalogue } from './route-catalogue';
import { RouteTable } from './route-table';

/**
 * The route table (filled by Fastify as routes register), the catalogue
 * built from controller metadata, and the sections whose errors are pages.
 */
@Global()
@Module({})
export class HttpModule {
  static forRoot(routes: RouteTable, sections: HtmlSections): DynamicModule {
    return {
      module: HttpModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: RouteTable, useValue: routes },
        { provide: HtmlSections, useValue: sections },
        RouteCatalogue,
      ],
      exports: [RouteTable, HtmlSections, RouteCatalogue],
    };
  }
}
