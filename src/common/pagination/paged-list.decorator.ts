import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { AcceptsQuery, PAGING_PARAMETERS } from '../query/accepts-query.decorator';

/**
 * Marks a list endpoint: it accepts exactly the paging parameters (anything
 * else is `400 unsupported_parameter`) and documents them in the reference.
 */
export function PagedList(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    AcceptsQuery(...PAGING_PARAMETERS),
    ApiQuery({
      name: 'limit',
      required: false,
      type: 'integer',
      description: '1 to 100 (larger values clamp to 100); default 50.',
    }),
    ApiQuery({ name: 'cursor', required: false, type: String, description: 'The next_cursor of the previous page.' }),
    ApiQuery({
      name: 'updated_after',
      required: false,
      type: String,
      description: 'ISO 8601 or epoch milliseconds: rows updated at or after it, ordered by updatedAt ascending.',
    }),
  );
}
