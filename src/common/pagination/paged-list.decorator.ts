import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { AcceptsQuery, PAGING_PARAMETERS } from '../query/accepts-query.decorator';
import { DEFAULT_LIMIT, MAX_LIMIT } from './page-request';

/**
 * Marks a list endpoint: it accepts exactly the paging parameters (anything
 * else is `400 unsupported_parameter`) and documents them in the reference,
 * with the figures the pager itself uses.
 */
export function PagedList(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    AcceptsQuery(...PAGING_PARAMETERS),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      description: `Rows per page, 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}. Larger values clamp to ${MAX_LIMIT}; missing, zero, negative or non-numeric values give ${DEFAULT_LIMIT} (never an error).`,
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      schema: { type: 'string' },
      description:
        'Opaque: the `next_cursor` of the previous page. Tied to one list, one ordering and one anchor row: malformed, from another ordering (`updated_after` added or removed) or anchored to a deleted row gives `400 invalid_cursor`.',
    }),
    ApiQuery({
      name: 'updated_after',
      required: false,
      schema: { type: 'string', examples: ['2026-11-01T00:00:00Z', '1793491200000'] },
      description:
        'ISO 8601 date-time (or a date, meaning midnight UTC) or epoch milliseconds: only rows whose `updatedAt` is at or after it, ordered by `updatedAt` ascending. Unreadable: `400 invalid_argument`.',
    }),
  );
}
