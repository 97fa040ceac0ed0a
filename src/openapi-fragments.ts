import type { OpenApiFragment } from './common/openapi/openapi-fragment';
import { EVENTS_OPENAPI } from './events/events.openapi';
import { IDENTITY_OPENAPI } from './identity/identity.openapi';
import { ORDERS_OPENAPI } from './orders/orders.openapi';
import { VENUES_OPENAPI } from './venues/venues.openapi';
import { webhooksOpenApiFragment } from './webhooks/outbox/webhook-deliveries.openapi';

/**
 * What each context contributes to the public document, composed here, above
 * the contexts, so the generic builder in common/ names none of them. The
 * order is the order of the document's tags.
 */
export function openApiFragments(): OpenApiFragment[] {
  return [IDENTITY_OPENAPI, EVENTS_OPENAPI, ORDERS_OPENAPI, VENUES_OPENAPI, webhooksOpenApiFragment()];
}
