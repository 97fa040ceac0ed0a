import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { AppConfig } from '../../config/app-config';
import { routeServes } from '../http/listener';
import { PRINCIPALS_EXTENSION } from '../auth-context/require-access.decorator';
import {
  internalBodyRefusalResponses,
  internalRefusalResponses,
  REFUSALS_EXTENSION,
  type InternalRefusals,
} from './internal-operations.decorator';
import type { OpenApiFragment } from './openapi-fragment';
import { ERROR_SCHEMAS, HEADER_COMPONENTS, PARAMETER_COMPONENTS, RESPONSE_COMPONENTS } from './openapi-conventions';
import { INTERNAL_INTRODUCTION, publicIntroduction } from './openapi-introduction';

export interface OpenApiDocuments {
  /** `/openapi.json` on the public listener. */
  public: OpenAPIObject;
  /** `/internal/openapi.json` on the admin listener only. */
  internal: OpenAPIObject;
}

type Json = { [key: string]: unknown };
type ComponentKind = 'schemas' | 'responses' | 'headers' | 'parameters' | 'securitySchemes';

const TITLE = 'Events, Orders and Webhooks API';
const VERSION = '1.0.0';

function collectRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectRefs(item, into);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, nested] of Object.entries(value)) {
    if (key === '$ref' && typeof nested === 'string') into.add(nested);
    else collectRefs(nested, into);
  }
}

/**
 * Keeps the components a document reaches from its paths and webhooks, so
 * each of the two documents carries only its own schemas.
 */
function reachableComponents(roots: unknown, all: Record<ComponentKind, Record<string, unknown>>): Json {
  const seen = new Set<string>();
  const queue = new Set<string>();
  collectRefs(roots, queue);
  for (;;) {
    const [next] = queue;
    if (next === undefined) break;
    queue.delete(next);
    if (seen.has(next)) continue;
    seen.add(next);
    const match = /^#\/components\/([^/]+)\/(.+)$/.exec(next);
    const [, kind, name] = match ?? [];
    if (kind === undefined || name === undefined) continue;
    const target = all[kind as ComponentKind]?.[name];
    if (target === undefined) throw new Error(`The OpenAPI document refers to ${next}, which is not defined`);
    collectRefs(target, queue);
  }
  const components: Json = {};
  for (const [kind, entries] of Object.entries(all)) {
    const kept = Object.fromEntries(
      Object.entries(entries).filter(
        ([name]) => kind === 'securitySchemes' || seen.has(`#/components/${kind}/${name}`),
      ),
    );
    if (Object.keys(kept).length > 0) components[kind] = kept;
  }
  return components;
}

/**
 * An internal route's own refusals (`@InternalRefusals`), and for every
 * method but GET a body's (413, 415), as responses beside the shared ones.
 */
function addInternalRefusals(operation: Json, method: string): void {
  const refusals = operation[REFUSALS_EXTENSION] as InternalRefusals | undefined;
  delete operation[REFUSALS_EXTENSION];
  operation['responses'] = {
    ...(operation['responses'] as Json),
    ...(method === 'get' ? {} : internalBodyRefusalResponses()),
    ...(refusals === undefined ? {} : internalRefusalResponses(refusals)),
  };
}

/** One part of every fragment, merged; two contexts naming the same entry is a mistake, refused at start. */
function fromFragments(fragments: readonly OpenApiFragment[], part: 'schemas' | 'webhooks'): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const [name, value] of fragments.flatMap((fragment) => Object.entries(fragment[part] ?? {}))) {
    if (name in merged) throw new Error(`Two OpenAPI fragments define ${part} entry ${name}`);
    merged[name] = value;
  }
  return merged;
}

/** "a, b or c" */
function either(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''}`;
}

/**
 * A public operation's access rule (its security requirement and the
 * principal types `@RequireAccess` wrote) said in its description too, where
 * a reader of the reference page looks, as the contract's summary table says
 * it.
 */
function describeAccess(operation: Json): void {
  const principals = operation[PRINCIPALS_EXTENSION];
  if (!Array.isArray(principals)) return;
  const [requirement] = (operation['security'] ?? []) as Array<Record<string, string[]>>;
  const scope = requirement?.['bearer']?.[0];
  const line = `**Access:** ${scope === undefined ? 'any valid key' : `the \`${scope}\` scope`}; ${either(principals as string[])} keys.`;
  const description = typeof operation['description'] === 'string' ? operation['description'] : '';
  operation['description'] = description === '' ? line : `${description}\n\n${line}`;
}

const hostForUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * One listener's paths. A response given as a `$ref` keeps nothing beside
 * it (the scanner adds an empty description that would hide the shared
 * one), and an operation without a summary is named by its method and path,
 * so a route added without reference decorators still reads sensibly.
 */
function pathsOf(scanned: OpenAPIObject, listener: 'public' | 'admin'): OpenAPIObject['paths'] {
  const paths = Object.entries(scanned.paths).filter(([path]) =>
    routeServes(path.replace(/\{(\w+)\}/g, ':$1'), listener),
  );
  for (const [path, item] of paths) {
    for (const [method, operation] of Object.entries(item as Json)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const op = operation as Json;
      op['summary'] ??= `${method.toUpperCase()} ${path}`;
      if (listener === 'admin') addInternalRefusals(op, method);
      else describeAccess(op);
      for (const [status, response] of Object.entries((op['responses'] ?? {}) as Record<string, Json>)) {
        if (typeof response['$ref'] === 'string') (op['responses'] as Json)[status] = { $ref: response['$ref'] };
      }
    }
  }
  return Object.fromEntries(paths);
}

/**
 * Builds both documents from one scan of the controllers' decorators, split
 * by the same rule that splits the listeners (`/internal` is admin-only), so
 * an internal route can never appear in the public document and every new
 * route lands in the right one without a list to keep. What the scan cannot
 * see (tags, named schemas, outgoing deliveries) comes from the contexts'
 * fragments.
 */
export function buildOpenApiDocuments(
  app: INestApplication,
  config: AppConfig,
  fragments: readonly OpenApiFragment[],
): OpenApiDocuments {
  const scanned = SwaggerModule.createDocument(app, new DocumentBuilder().setOpenAPIVersion('3.1.0').build());
  const all: Record<ComponentKind, Record<string, unknown>> = {
    schemas: {
      ...scanned.components?.schemas,
      ...ERROR_SCHEMAS,
      ...fromFragments(fragments, 'schemas'),
    },
    responses: RESPONSE_COMPONENTS,
    headers: HEADER_COMPONENTS,
    parameters: PARAMETER_COMPONENTS,
    securitySchemes: {},
  };

  const publicPaths = pathsOf(scanned, 'public');
  const webhooks = fromFragments(fragments, 'webhooks');
  const publicDocument = {
    openapi: '3.1.0',
    info: {
      title: TITLE,
      version: VERSION,
      summary: 'Events, orders and signed webhook deliveries for event organisers and venues.',
      description: publicIntroduction(config.rateLimit),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: config.publicWebUrl }],
    security: [{ bearer: [] }],
    tags: fragments.flatMap((fragment) => fragment.tags ?? []),
    paths: publicPaths,
    webhooks,
    components: {
      ...reachableComponents({ publicPaths, webhooks }, all),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'svc_live_ + 48 hex',
          description: 'An API key: `svc_live_` followed by 48 hex characters, minted in the dashboard.',
        },
      },
    },
  } as unknown as OpenAPIObject;

  const internalPaths = pathsOf(scanned, 'admin');
  const internalDocument = {
    openapi: '3.1.0',
    info: {
      title: `${TITLE}: internal`,
      version: VERSION,
      description: INTERNAL_INTRODUCTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: `http://${hostForUrl(config.adminHost)}:${config.adminPort}`, description: 'The admin listener' }],
    security: [{ adminToken: [] }],
    paths: internalPaths,
    components: {
      ...reachableComponents(internalPaths, all),
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'The `ADMIN_TOKEN` of the service.' },
      },
    },
  } as unknown as OpenAPIObject;

  return { public: publicDocument, internal: internalDocument };
}
