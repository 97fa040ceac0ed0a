import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import { envelopeOf } from './envelope';
import { SerializedBody } from './page';

/**
 * Wraps every handler result in its envelope (`envelopeOf`) at the one place
 * Nest hands a result to Fastify. It is not a Nest interceptor because with
 * no interceptor at all Nest skips its per-request rxjs pipeline, a cost
 * every request would otherwise pay.
 *
 * A `SerializedBody` is already its envelope's JSON text and is sent as is.
 *
 * A 304 is sent without a body or content headers, to GET and HEAD alike.
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
    if ((statusCode ?? (response as FastifyReply).statusCode) === 304) {
      // A HEAD's empty payload would get `Content-Length: 0` from Fastify's HEAD route (a length the 200
      // does not have, which RFC 9110 forbids on a 304); an empty stream is drained and given no length.
      const head = (response as FastifyReply).request.method === 'HEAD';
      return super.reply(response, head ? Readable.from([]) : undefined, statusCode);
    }
    if (body instanceof SerializedBody) {
      // The same content type Fastify gives a body it serialises itself.
      void (response as FastifyReply).type('application/json; charset=utf-8');
      return super.reply(response, body.json, statusCode);
    }
    return super.reply(response, envelopeOf(body), statusCode);
  }
}
