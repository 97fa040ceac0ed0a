import { Module } from '@nestjs/common';
import { OpenApiDocumentStore } from './openapi-document.store';
import { OpenApiInternalController } from './openapi.internal.controller';

@Module({
  controllers: [OpenApiInternalController],
  providers: [OpenApiDocumentStore],
  exports: [OpenApiDocumentStore],
})
export class OpenApiModule {}
