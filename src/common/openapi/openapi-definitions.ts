import type { OpenAPIObject } from '@nestjs/swagger';
import { dump } from 'js-yaml';

/** What serving a document needs of the HTTP adapter (Nest's Fastify adapter, as @nestjs/swagger uses it). */
interface DefinitionRoutes {
  get(path: string, handler: (request: unknown, reply: DefinitionReply) => DefinitionReply): unknown;
}

interface DefinitionReply {
  type(contentType: string): DefinitionReply;
  send(payload: string): DefinitionReply;
}

/** The text `serialise` makes, made on the first call and kept. */
function once(serialise: () => string): () => string {
  let text: string | undefined;
  return () => (text ??= serialise());
}

/**
 * `GET /openapi.json` and `GET /openapi.yaml`: the public document,
 * serialised on its first request and kept, since it never changes while the
 * service runs. @nestjs/swagger's own routes for them serialise the whole
 * document on every request (the YAML form at many times the JSON one's
 * cost), which let anyone without a key keep a core busy with a modest
 * request rate. Not serialised at start: every start (and every test app)
 * would pay for a YAML form few ask for. Same paths, content types and
 * bytes as those routes (the YAML with the same `js-yaml` options).
 */
export function serveOpenApiDefinitions(
  routes: DefinitionRoutes,
  document: OpenAPIObject,
  paths: { json: string; yaml: string },
): void {
  const json = once(() => JSON.stringify(document));
  const yaml = once(() => dump(document, { skipInvalid: true, noRefs: true }));
  routes.get(paths.json, (_request, reply) => reply.type('application/json').send(json()));
  routes.get(paths.yaml, (_request, reply) => reply.type('text/yaml').send(yaml()));
}
