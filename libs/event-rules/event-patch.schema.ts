import { LOCALE_CODE, MAX_LOCALES } from '../locale/localised-text';
import {
  API_WRITABLE_VISIBILITIES,
  EVENT_PATCH_FIELDS,
  MAX_ADDITIONAL_LOCATIONS,
  SERVER_OWNED_EVENT_FIELDS,
  type EventPatch,
} from './event-patch';
import { MAX_ARRAY_ITEMS, MAX_ID_LENGTH, MAX_JSON_CHARS, MAX_STRING_LENGTH } from './field-checks';
import { MEETING_PROVIDERS, MEETING_PROVIDER_CODES } from './online-meeting';
import { MAX_DATE_OPTIONS, PLANNING_DATE_MODES, PLANNING_PLACE_MODES } from './planning';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

const localeMap = (what: string): JsonSchema => ({
  type: 'object',
  description: `${what}: locale code to text. Locale keys are normalised to UPPERCASE on write.`,
  propertyNames: { pattern: LOCALE_CODE.source, maxLength: 35 },
  additionalProperties: { type: 'string', maxLength: MAX_STRING_LENGTH },
  maxProperties: MAX_LOCALES,
  examples: [{ en: what === 'Title' ? 'Jazz night' : 'Live music from 8pm.' }],
});

const instant = (description: string): JsonSchema => ({
  description: `${description} ISO 8601 (Z, ±HH:MM or no offset meaning UTC; a date alone is midnight UTC) or integer epoch milliseconds.`,
  oneOf: [
    { type: 'string', maxLength: 64, examples: ['2027-05-01T19:00:00Z'] },
    { type: 'integer', examples: [1809198000000] },
  ],
});

const id: JsonSchema = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH };
const text: JsonSchema = { type: 'string', maxLength: MAX_STRING_LENGTH };
const tags = (description: string): JsonSchema => ({
  type: 'array',
  description,
  items: { type: 'string', maxLength: 200 },
  maxItems: MAX_ARRAY_ITEMS,
});
const freeObject = (description: string): JsonSchema => ({
  type: 'object',
  description: `${description} Free-form JSON, at most ${MAX_JSON_CHARS} characters serialised and 10 levels deep.`,
});
const dateText: JsonSchema = { type: 'string', maxLength: 64, description: 'ISO 8601 date or date-time.' };

/** `planning` (api-v1.md "planning object"); while `date.mode` is not `fixed` the event cannot be published. */
export const PLANNING_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'Planning state. While `date.mode` is not `fixed`, `startTime` is a placeholder and the event cannot be published.',
  properties: {
    date: {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: [...PLANNING_DATE_MODES], default: 'fixed' },
        options: {
          type: 'array',
          description: 'Candidate dates; required (at least one) when mode is `options`. Ids are unique.',
          maxItems: MAX_DATE_OPTIONS,
          items: {
            type: 'object',
            required: ['id', 'start'],
            properties: {
              id,
              start: dateText,
              end: { ...dateText, type: ['string', 'null'] },
              allDay: { type: 'boolean', default: false },
              note: { type: ['string', 'null'], maxLength: 2000 },
            },
          },
        },
        from: { ...dateText, description: 'Start of the window; required when mode is `window`.' },
        to: { ...dateText, description: 'End of the window; required when mode is `window`.' },
        note: { type: ['string', 'null'], maxLength: 2000 },
      },
    },
    place: {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: [...PLANNING_PLACE_MODES], default: 'venue' },
        city: { type: 'string', maxLength: 200, description: 'Required when mode is `area`.' },
      },
    },
  },
};

/** `onlineMeeting` (api-v1.md "onlineMeeting object"). */
export const ONLINE_MEETING_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['provider', 'url'],
  properties: {
    provider: { type: 'string', enum: [...MEETING_PROVIDER_CODES] },
    url: {
      type: 'string',
      format: 'uri',
      maxLength: 2048,
      description: `https only, no credentials, no port, on the provider's own hosts: ${MEETING_PROVIDER_CODES.map(
        (code) => {
          const rule = MEETING_PROVIDERS[code];
          return `${code}: ${[...rule.exactHosts, ...rule.domainsWithSubdomains.map((d) => `${d} and *.${d}`)].join(', ')}`;
        },
      ).join('; ')}.`,
    },
    label: { type: ['string', 'null'], maxLength: 200 },
  },
};

/**
 * One schema per writable field. The mapped type drops the `?` of
 * EventPatch, so the compiler refuses a field the validator knows and this
 * table forgets; the spec checks the order matches the validator's table.
 */
export const EVENT_PATCH_FIELD_SCHEMAS: { [K in keyof EventPatch]-?: JsonSchema } = {
  title: localeMap('Title'),
  description: localeMap('Description'),
  startTime: instant('Required on create.'),
  endTime: instant('Optional.'),
  dateOnly: { type: 'boolean', description: "No time of day: stored as noon in the location's time zone." },
  locationId: { ...id, description: 'The single operative venue location; must name a live location.' },
  additionalLocationIds: {
    type: 'array',
    items: id,
    maxItems: MAX_ARRAY_ITEMS,
    description: `Display-only extra places, in order. Deduplicated, the primary location dropped, capped at ${MAX_ADDITIONAL_LOCATIONS}.`,
  },
  planning: { oneOf: [{ $ref: '#/components/schemas/Planning' }, { type: 'null' }], description: '`null` clears it.' },
  onlineMeeting: {
    oneOf: [{ $ref: '#/components/schemas/OnlineMeeting' }, { type: 'null' }],
    description: '`null` clears it. Hidden with the location by `hideLocation`.',
  },
  imageBlobName: { type: 'string', minLength: 1, maxLength: 1024 },
  imageBlobNames: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 1024 },
    maxItems: MAX_ARRAY_ITEMS,
  },
  tags: tags('Tags.'),
  subtags: tags('Subtags.'),
  languages: tags('Languages.'),
  metadata: freeObject('Metadata.'),
  visibility: {
    type: 'string',
    enum: [...API_WRITABLE_VISIBILITIES],
    description: 'Only `draft` or `unlisted` (`403 forbidden` otherwise). An unlisted event never returns to draft.',
  },
  themeColor: text,
  secondaryThemeColor: text,
  backgroundStyle: text,
  colorMode: text,
  backgroundColor: text,
  headingFont: text,
  titleFontScale: { type: 'number', exclusiveMinimum: 0, maximum: 10 },
  backgroundPrimaryColor: text,
  backgroundParams: freeObject('Background parameters.'),
  plasmaPreset: freeObject('Plasma preset.'),
  hideLocation: { type: 'boolean', description: 'Also hides the online meeting link.' },
  hideRelatedEvents: { type: 'boolean' },
  groupSizeOverride: freeObject('Group size override.'),
  seriesId: id,
  links: {
    type: 'array',
    items: { type: 'object' },
    maxItems: MAX_ARRAY_ITEMS,
    description: `Objects; at most ${MAX_JSON_CHARS} characters serialised in all.`,
  },
  refundOfferOnChange: {
    type: 'boolean',
    description:
      'Meaningful only as `true` on a save that moves `startTime` or `locationId`: the server sets a refund offer and forgets the flag. Alone it is not a writable field.',
  },
};

/** The EventPatch body: the writable fields in the contract's order; every other key is dropped silently. */
export const EVENT_PATCH_SCHEMA: JsonSchema = {
  type: 'object',
  description: `Writable event fields. Every other key is dropped silently, including the server-owned ${SERVER_OWNED_EVENT_FIELDS.map((f) => `\`${f}\``).join(', ')}. \`null\` clears \`planning\` and \`onlineMeeting\` and is refused elsewhere.`,
  properties: Object.fromEntries(EVENT_PATCH_FIELDS.map((field) => [field, EVENT_PATCH_FIELD_SCHEMAS[field]])),
};

/** The body of a create: the same fields, with `startTime` required (the contract's "Required on create"). */
export const EVENT_CREATE_SCHEMA: JsonSchema = {
  ...EVENT_PATCH_SCHEMA,
  description: `The EventPatch of a create: \`startTime\` is required. ${String(EVENT_PATCH_SCHEMA['description'])}`,
  required: ['startTime'],
};

/** The components the EventPatch schemas define and refer to, by their names in the document. */
export const EVENT_PATCH_COMPONENTS: Readonly<Record<string, JsonSchema>> = {
  EventCreate: EVENT_CREATE_SCHEMA,
  EventPatch: EVENT_PATCH_SCHEMA,
  Planning: PLANNING_SCHEMA,
  OnlineMeeting: ONLINE_MEETING_SCHEMA,
};
