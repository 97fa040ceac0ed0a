import { EVENT_PATCH_COMPONENTS } from '../../libs/event-rules/event-patch.schema';
import type { OpenApiFragment } from '../common/openapi/openapi-fragment';

/** Events' part of the public document: its tag, and the event fields' schemas built from the field table. */
export const EVENTS_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'Events', description: 'Events the principal owns or that take place at its address.' }],
  schemas: EVENT_PATCH_COMPONENTS,
};
