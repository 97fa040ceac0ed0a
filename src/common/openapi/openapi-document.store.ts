import { Injectable } from '@nestjs/common';
import type { OpenApiDocuments } from './openapi-documents';

/**
 * Holds the documents built at start. They are scanned from the running
 * application, so they exist only after Nest has created it; bootstrap hands
 * them over here for the controller that serves the internal one.
 */
@Injectable()
export class OpenApiDocumentStore {
  private documents: OpenApiDocuments | null = null;

  set(documents: OpenApiDocuments): void {
    this.documents = documents;
  }

  get(): OpenApiDocuments {
    if (this.documents === null) throw new Error('the OpenAPI documents are built at start, before serving');
    return this.documents;
  }
}
