import { Page, TopLevelBody } from './page';

/**
 * The body a handler's result is sent as: a `Page` becomes the list
 * envelope, a `TopLevelBody` is sent as is, and anything else becomes
 * `{data}`. It decides by type, never by looking at fields.
 */
export function envelopeOf(result: unknown): object {
  if (result instanceof Page) return { data: result.items, has_more: result.hasMore, next_cursor: result.nextCursor };
  if (result instanceof TopLevelBody) return result.body as object;
  return { data: result };
}
