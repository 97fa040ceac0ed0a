import { FastifyAdapter } from '@nestjs/platform-fastify';
import { envelopeOf } from './envelope';

/**
 * Wraps every handler result in its envelope (`envelopeOf`) at the one place
 * Nest hands a result to Fastify. It is not a Nest interceptor because with
 * no interceptor at all Nest skips its per-request rxjs pipeline, which cost
 * about 6% of the service's CPU under `GET /v1/events/{id}`.
 *
 * Only results pass through here: error bodies are sent by the exception
 * filter, and handlers that take the reply (`@Res()`) send their own.
 */
export class EnvelopingFastifyAdapter extends FastifyAdapter {
  override reply(
    ...[response, body, statusCode]: Parameters<FastifyAdapter['reply']>
  ): ReturnType<FastifyAdapter['reply']> {
    return super.reply(response, envelopeOf(body), statusCode);
  }
}
