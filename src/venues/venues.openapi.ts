import type { OpenApiFragment } from '../common/openapi/openapi-fragment';

/** Venues' part of the public document. */
export const VENUES_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'Venues', description: 'The venue record of a venue key.' }],
};
