import { EVENT_PATCH_COMPONENTS, EVENT_PATCH_SCHEMA } from '../../libs/event-rules/event-patch.schema';
import type { OpenApiFragment } from '../common/openapi/openapi-fragment';
import { ref } from '../common/openapi/openapi-conventions';

const patchFields = EVENT_PATCH_SCHEMA['properties'] as Record<string, unknown>;

/**
 * The body of `POST /internal/events`: the EventPatch fields, for fixtures
 * the public API cannot make (no owner or a placeholder one, any of the four
 * visibilities, no `startTime`).
 */
const INTERNAL_EVENT_CREATE = {
  type: 'object',
  description:
    'The EventPatch fields plus `organizerId`; `visibility` may be any of the four and `startTime` may be missing. Every other key is dropped silently.',
  required: ['organizerId'],
  properties: {
    organizerId: {
      type: ['string', 'null'],
      description: 'The owner: an organiser id (a placeholder too), or `null`.',
    },
    ...patchFields,
    visibility: ref('schemas', 'Visibility'),
  },
};

/** Events' part of the documents: its tag, and the event fields' schemas built from the field table. */
export const EVENTS_OPENAPI: OpenApiFragment = {
  tags: [{ name: 'Events', description: 'Events the principal owns or that take place at its address.' }],
  schemas: { ...EVENT_PATCH_COMPONENTS, InternalEventCreate: INTERNAL_EVENT_CREATE },
};
