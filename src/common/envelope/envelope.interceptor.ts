import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { Page, TopLevelBody } from './page';

/**
 * Wraps what handlers return: a `Page` becomes the list envelope, a
 * `TopLevelBody` is sent as is, and anything else becomes `{data}`. It decides
 * by type, never by looking at fields.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (result instanceof Page) {
          return { data: result.items, has_more: result.hasMore, next_cursor: result.nextCursor };
        }
        if (result instanceof TopLevelBody) return result.body as object;
        return { data: result };
      }),
    );
  }
}
