/**
 * Example values for the reference. The document spec validates every
 * example against the schema it illustrates, so they cannot drift from it.
 */

const page = <T>(data: T[], next: string | null = null): object => ({
  data,
  has_more: next !== null,
  next_cursor: next,
});

export const EVENT_EXAMPLE = {
  id: 'evt_5f0c2a9d41b7e3c8a6d2f104',
  title: 'Jazz night',
  visibility: 'draft',
  startTime: '2027-05-01T19:00:00.000Z',
  endTime: '2027-05-01T23:00:00.000Z',
  updatedAt: '2026-11-23T18:20:03.512Z',
  url: 'https://events.example.com/events/evt_5f0c2a9d41b7e3c8a6d2f104',
};

export const EVENT_PATCH_EXAMPLE = {
  title: { en: 'Jazz night', de: 'Jazzabend' },
  startTime: '2027-05-01T19:00:00Z',
  endTime: 1809212400000,
  visibility: 'draft',
  tags: ['jazz', 'live'],
};

export const ORDER_EXAMPLE = {
  id: 'ord_0d4e7a1b9c2f5e8a3b6c9d02',
  eventId: 'evt_5f0c2a9d41b7e3c8a6d2f104',
  status: 'confirmed',
  isRsvp: false,
  quantity: 2,
  totalAmountMinor: 4500,
  currency: 'EUR',
  billingName: 'Ada Lovelace',
  billingEmail: 'ada@example.com',
  attributionSource: null,
  createdAt: '2026-11-20T10:15:00.000Z',
  updatedAt: '2026-11-20T10:15:00.000Z',
};

export const VENUE_EXAMPLE = {
  id: 'ven_9a8b7c6d5e4f3a2b1c0d9e8f',
  name: 'Blue Note Hall',
  slug: 'blue-note-hall',
  description: 'A jazz club by the river.',
  websiteUrl: 'https://bluenote.example.com',
  category: 'club',
  claimStatus: 'claimed',
  url: 'https://events.example.com/venues/ven_9a8b7c6d5e4f3a2b1c0d9e8f',
  locations: [
    {
      id: 'loc_1a2b3c4d5e6f7a8b9c0d1e2f',
      displayName: 'Main room',
      address: 'Uferstr. 1',
      city: 'Berlin',
      country: 'DE',
    },
  ],
};

export const WEBHOOK_EXAMPLE = {
  id: 'whk_3c5e7a9b1d2f4a6c8e0b2d4f',
  url: 'https://hooks.example.com/events',
  events: ['order.confirmed', 'event.published'],
  secret: 'whsec_8f14e45fceea167a5a36dedd4bea2543f6c1a2b3c4d5e6f708192a3b4c5d6e7f',
  enabled: true,
  description: 'Ticket sync',
  lastStatus: 200,
  consecutiveFailures: 0,
};

const API_DESCRIPTION = {
  api: 'events-orders-webhooks',
  version: 'v1',
  organizerId: 'org_7e6d5c4b3a2f1e0d9c8b7a69',
  scopes: ['events:read', 'orders:read'],
  endpoints: {
    'GET /v1/events': 'scope: events:read; principals: organiser, venue',
    'GET /v1/orders': 'scope: orders:read; principals: organiser',
  },
  events_available: ['order.confirmed', 'event.published'],
  auth: 'Authorization: Bearer <API_KEY>; keys are svc_live_ followed by 48 hex characters.',
  pagination: {
    style: 'cursor',
    parameters: ['limit', 'cursor', 'updated_after'],
    maxLimit: 100,
    defaultLimit: 50,
    envelope: ['data', 'has_more', 'next_cursor'],
  },
  filters: { updated_after: 'ISO 8601 timestamp or epoch milliseconds: only rows whose updatedAt is at or after it.' },
  rateLimits: {
    reads: '600 per 60 seconds (GET, HEAD)',
    writes: '120 per 60 seconds (POST, PATCH, DELETE)',
    writeMethods: ['POST', 'PATCH', 'DELETE'],
    headers: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'],
    scope: 'Per account: every key of the organiser account draws on one budget; extra keys add nothing.',
  },
  requestId: '4f6c2a1e-8d2b-4a5e-9a43-0f2b6c1d7e90',
  docs: 'https://events.example.com/docs',
};

export const EXAMPLES = {
  apiRoot: { ...API_DESCRIPTION, data: API_DESCRIPTION },
  eventPage: page([EVENT_EXAMPLE], 'eyJvIjoic3RhcnRUaW1lIiwiaWQiOiJldnRfNWYwYyJ9.k3Jd9s'),
  event: { data: EVENT_EXAMPLE },
  orderPage: page([ORDER_EXAMPLE]),
  venuePage: page([VENUE_EXAMPLE]),
  webhookPage: page([WEBHOOK_EXAMPLE]),
  webhook: { data: WEBHOOK_EXAMPLE },
  deletedWebhook: { data: { id: WEBHOOK_EXAMPLE.id, deleted: true } },
  webhookCreate: {
    url: 'https://hooks.example.com/events',
    events: ['order.confirmed', 'event.published'],
    description: 'Ticket sync',
  },
  me: {
    data: {
      principal: { type: 'organiser', id: 'org_7e6d5c4b3a2f1e0d9c8b7a69' },
      organizerId: 'org_7e6d5c4b3a2f1e0d9c8b7a69',
      scopes: ['events:read', 'orders:read', 'events:write'],
      apiVersion: 'v1',
      keyPrefix: 'svc_live_3f9a1c…',
    },
  },
} as const;
