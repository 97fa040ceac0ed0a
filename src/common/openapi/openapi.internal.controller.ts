import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { TopLevelBody } from '../envelope/page';
import { InternalOperations } from './internal-operations.decorator';
import { headerRefs } from './openapi-conventions';
import { OpenApiDocumentStore } from './openapi-document.store';

/**
 * The internal API's own document. A Nest route under `/internal`, so it
 * answers only on the admin listener and only with the admin token, like
 * every other internal route.
 */
@InternalOperations('Reference')
@Controller('internal')
export class OpenApiInternalController {
  constructor(private readonly store: OpenApiDocumentStore) {}

  @Get('openapi.json')
  @ApiOperation({ operationId: 'internalOpenApi', summary: 'This document (OpenAPI 3.1), sent as is, without `data`' })
  @ApiOkResponse({
    description: 'The OpenAPI document.',
    headers: headerRefs(['X-Request-Id']),
    schema: {
      type: 'object',
      required: ['openapi', 'info', 'paths'],
      properties: { openapi: { type: 'string', enum: ['3.1.0'] }, info: { type: 'object' }, paths: { type: 'object' } },
    },
  })
  document(): TopLevelBody<object> {
    return new TopLevelBody(this.store.get().internal);
  }
}
