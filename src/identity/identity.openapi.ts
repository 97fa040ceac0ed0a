import type { OpenApiFragment } from '../common/openapi/openapi-fragment';

/** Identity's part of the public document. */
export const IDENTITY_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'Identity', description: 'The calling key and what it may do.' }],
};
