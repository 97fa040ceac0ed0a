import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { envelopeOf } from './envelope';
import { SerializedBody } from './page';

/**
 * Wraps every handler result in its envelope (`envelopeOf`) at the one place
 * Nest hands a result to Fastify. It is not a Nest interceptor because with
 * no interceptor at all Nest skips its per-request rxjs pipeline, which cost
 * about 6% of the service's CPU under `GET /v1/events/{id}`.
 *
 * A `SerializedBody` is already its envelope's JSON text and is sent as is.
 *
 * A 304 is sent without a body.
 *
 * Only results pass through here: error bodies are sent by the exception
 * filter, and handlers that take the reply (`@Res()`) send their own.
 */
export class EnvelopingFastifyAdapter extends FastifyAdapter {
  override reply(
    ...[response, body, statusCode]: Parameters<FastifyAdapter['reply']>
  ): ReturnType<FastifyAdapter['reply']> {
    // 304 Not Modified has no content, and none of its metadata: no envelope, so Fastify sends neither a
    // Content-Type nor a Content-Length of its own (RFC 9110 allows only the 200's length there).
    if ((statusCode ?? (response as FastifyReply).statusCode) === 304)
      return super.reply(response, undefined, statusCode);
    if (body instanceof SerializedBody) {
      // The same content type Fastify gives a body it serialises itself.
      void (response as FastifyReply).type('application/json; charset=utf-8');
      return super.reply(response, body.json, statusCode);
    }
    return super.reply(response, envelopeOf(body), statusCode);
  }
}
