/**
 * What a context adds to the public document beyond its scanned routes: its
 * tags (in the order the document lists them), named schemas its decorators
 * refer to, and outgoing deliveries (OpenAPI 3.1 `webhooks`). Each context
 * exports its own; the documents are composed above the contexts
 * (`src/openapi-fragments.ts`), so this layer names none of them.
 */
export interface OpenApiFragment {
  tags?: ReadonlyArray<{ name: string; description: string }>;
  schemas?: Record<string, unknown>;
  webhooks?: Record<string, unknown>;
}
