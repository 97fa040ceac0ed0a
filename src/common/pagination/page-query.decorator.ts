import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { pageRequestOf, type PageRequest } from './page-request';

/**
 * The paging parameters of a list (`limit`, `cursor`, `updated_after`),
 * read from the query string in one place for every list. Pair it with
 * `@PagedList()`, which declares and documents them.
 */
export const PageQuery = createParamDecorator((_data: unknown, context: ExecutionContext): PageRequest => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return pageRequestOf((request.query ?? {}) as Record<string, unknown>);
});
