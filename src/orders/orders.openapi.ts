import type { OpenApiFragment } from '../common/openapi/openapi-fragment';

/** Orders' part of the public document. */
export const ORDERS_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'Orders', description: 'Confirmed orders of the organiser’s events. Read-only.' }],
};
