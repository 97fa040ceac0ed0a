import type { Type } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/**
 * The page envelope (`{data, has_more, next_cursor}`, what the envelope
 * interceptor makes of a `Page`) around one resource, as a named schema such
 * as `EventPage`. Built once per resource so the rules of the envelope are
 * written once.
 */
export function pageSchemaOf(item: Type, name: string): Type {
  class PageEnvelope {}
  ApiProperty({ type: [item], description: 'The rows of this page.' })(PageEnvelope.prototype, 'data');
  ApiProperty({
    type: Boolean,
    description:
      'Observed, not inferred: the server reads one row beyond the page and reports whether it existed. A full last page reports `false`.',
  })(PageEnvelope.prototype, 'has_more');
  ApiProperty({
    type: String,
    nullable: true,
    description: 'Value for `cursor` on the next request; `null` exactly when `has_more` is `false`.',
  })(PageEnvelope.prototype, 'next_cursor');
  ApiSchema({ name, description: `A page of ${name.replace(/Page$/, '')} rows.` })(PageEnvelope);
  Object.defineProperty(PageEnvelope, 'name', { value: name });
  return PageEnvelope;
}
