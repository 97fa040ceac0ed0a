import { MAX_DESCRIPTION_LENGTH, WEBHOOK_EVENT_TYPES } from '../webhook-event-types';

/**
 * The body of `POST /v1/webhooks` for the OpenAPI document. It is written
 * out rather than read from a class because the body is taken as a plain
 * object and its rules are contract answers the service applies itself
 * (unknown types filtered, a venue refused with 403, only the literal
 * `false` disabling).
 */
export const CREATE_WEBHOOK_SCHEMA = {
  type: 'object',
  required: ['url', 'events'],
  properties: {
    url: {
      type: 'string',
      format: 'uri',
      description:
        'https on a public host. Loopback, private, link-local, carrier-grade NAT, multicast, documentation and cloud-metadata addresses and names are refused, and so are credentials in the URL. Checked again by name resolution at every delivery.',
    },
    events: {
      type: 'array',
      minItems: 1,
      items: { type: 'string' },
      description: `At least one of ${WEBHOOK_EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}. Unknown types are filtered out; if none remain, \`400 invalid_argument\`. A venue key may ask for \`event.published\` only (\`403 forbidden\` otherwise).`,
    },
    description: {
      type: 'string',
      description: `Trimmed and truncated to ${MAX_DESCRIPTION_LENGTH} characters.`,
    },
    enabled: { type: 'boolean', default: true, description: 'Only the literal `false` creates it disabled.' },
  },
} as const;
