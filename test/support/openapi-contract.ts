import { ID_LESS_DELETE_PATHS } from '../../src/common/http/id-less-delete';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { pathOf, stripPrefixBeforeVersion } from '../../src/common/http/listener';

type Json = { [key: string]: any };

/** One response as the test client received it. */
export interface ObservedResponse {
  method: string;
  /** Path and query as requested. */
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

const SCHEMAS_ID = 'https://contract.test/schemas';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Headers whose presence is part of the contract: one a response carries must be documented for that response. */
const CONTRACT_HEADERS = [
  'etag',
  'location',
  'idempotent-replayed',
  'retry-after',
  'allow',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];
/** The reference itself is served beside the API; it is not an operation of it. */
export const REFERENCE_PATHS = /^\/(?:openapi\.json|openapi\.yaml|docs(?:\/.*)?)$/;
/** The probes are for the platform, not integrators: documented in docs/operations.md, not in the API document. */
export const PROBE_PATHS = /^\/(?:healthz|readyz)$/;

const ERROR_SCHEMA = { $ref: '#/components/schemas/Error' };

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Json;
}

function templatePattern(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Every `$ref` to a schema becomes absolute, so schemas compile on their own against one registered `$defs` set. */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Json = {};
  for (const [key, nested] of Object.entries(value)) {
    copy[key] =
      key === '$ref' && typeof nested === 'string' && nested.startsWith('#/components/schemas/')
        ? `${SCHEMAS_ID}#/$defs/${nested.slice('#/components/schemas/'.length)}`
        : absoluteRefs(nested);
  }
  return copy;
}

/**
 * Checks real responses against the served OpenAPI document: the operation
 * exists, the status is documented, the body matches the documented schema
 * (JSON Schema 2020-12 through ajv, formats included), required headers are
 * present and valid, and no contract header appears where it is not
 * documented. Unknown paths and methods must answer the documented Error
 * body with 404, or 405 with `Allow`.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true });
  private readonly operations: Operation[];
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor(readonly document: Json) {
    addFormats(this.ajv);
    // OpenAPI's own annotation keywords inside schemas.
    this.ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    const schemas = absoluteRefs(document['components']?.['schemas'] ?? {}) as Json;
    this.ajv.addSchema({ $id: SCHEMAS_ID, $defs: schemas });
    this.operations = Object.entries(document['paths'] as Json).flatMap(([template, item]) =>
      Object.entries(item as Json)
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, operation]) => ({
          method,
          template,
          pattern: templatePattern(template),
          operation: operation as Json,
        })),
    );
  }

  /** The component a `$ref` names, or the object itself. */
  resolve(value: Json): Json {
    const target = value['$ref'];
    if (typeof target !== 'string') return value;
    const found = target
      .replace(/^#\//, '')
      .split('/')
      .reduce<any>((node, part) => node?.[part], this.document);
    if (found === undefined) throw new Error(`unresolved ${target}`);
    return this.resolve(found as Json);
  }

  /** Validates a value against a schema of the document; returns ajv's messages. */
  schemaErrors(schema: object, value: unknown): string[] {
    let validate = this.compiled.get(schema);
    if (validate === undefined) {
      validate = this.ajv.compile(absoluteRefs(schema) as object);
      this.compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`.trim());
  }

  /** The operation a request reaches, if the document has it. */
  operationFor(method: string, path: string): Operation | undefined {
    const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const direct = this.operations.find((op) => op.method === wanted && op.pattern.test(path));
    if (direct !== undefined) return direct;
    // The contract documents a request that leaves out an operation's last path
    // parameter on that operation (`DELETE /v1/webhooks` and `DELETE /v1/webhooks/`
    // are `400 invalid_argument`).
    const withoutSlash = ID_LESS_DELETE_PATHS.includes(path) ? path.replace(/\/$/, '') : path;
    return this.operations.find(
      (op) =>
        op.method === wanted &&
        /\/\{[^}]+\}$/.test(op.template) &&
        templatePattern(op.template.replace(/\/\{[^}]+\}$/, '')).test(withoutSlash),
    );
  }

  /** Every way the response departs from the document; empty when it conforms. */
  problems(observed: ObservedResponse): string[] {
    const path = pathOf(stripPrefixBeforeVersion(observed.url));
    if (REFERENCE_PATHS.test(path) || PROBE_PATHS.test(path)) return [];
    const operation = this.operationFor(observed.method, path);
    if (operation === undefined) return this.unroutedProblems(observed, path);

    const responses = operation.operation['responses'] as Json;
    const statusText = String(observed.status);
    const declared = responses[statusText] ?? responses[`${statusText[0]}XX`] ?? responses['default'];
    const where = `${observed.method} ${path} → ${observed.status}`;
    if (declared === undefined) {
      return [
        `${where}: status not documented for ${operation.method.toUpperCase()} ${operation.template} (${observed.text.slice(0, 200)})`,
      ];
    }
    const response = this.resolve(declared as Json);
    const problems = this.headerProblems(response, observed).map((problem) => `${where}: ${problem}`);

    const media = response['content'] as Json | undefined;
    const content = media?.['application/json'];
    const bodyless = observed.method.toUpperCase() === 'HEAD' || observed.status === 304;
    if (bodyless || media === undefined) {
      if (observed.text !== '') problems.push(`${where}: a body where the document has none`);
      return problems;
    }
    if (content === undefined) {
      // A body of another media type (the metrics' Prometheus text): its type must be the documented one.
      const type = observed.headers.get('content-type') ?? '';
      if (!Object.keys(media).some((documented) => type.startsWith(documented.split(';')[0] ?? documented))) {
        problems.push(`${where}: content type ${type} not documented`);
      }
      return problems;
    }
    let body: unknown;
    try {
      body = JSON.parse(observed.text);
    } catch {
      return [...problems, `${where}: body is not JSON: ${observed.text.slice(0, 200)}`];
    }
    for (const error of this.schemaErrors(content['schema'] as object, body)) {
      problems.push(`${where}: body ${error} (${observed.text.slice(0, 300)})`);
    }
    return problems;
  }

  private headerProblems(response: Json, observed: ObservedResponse): string[] {
    const problems: string[] = [];
    const documented = Object.fromEntries(
      Object.entries((response['headers'] ?? {}) as Json).map(([name, header]) => [
        name.toLowerCase(),
        this.resolve(header as Json),
      ]),
    );
    for (const [name, header] of Object.entries(documented)) {
      const value = observed.headers.get(name);
      if (value === null) {
        if (header['required'] === true) problems.push(`required header ${name} missing`);
        continue;
      }
      const schema = header['schema'] as Json | undefined;
      if (schema === undefined) continue;
      const typed = schema['type'] === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
      for (const error of this.schemaErrors(schema, typed)) problems.push(`header ${name}: ${error} (${value})`);
    }
    for (const name of CONTRACT_HEADERS) {
      if (observed.headers.has(name) && documented[name] === undefined)
        problems.push(`header ${name} sent but not documented`);
    }
    return problems;
  }

  /**
   * A path or method the document does not have: 404, or 405 with `Allow`
   * when the path exists (or 429 once a client has sent too many of them).
   */
  private unroutedProblems(observed: ObservedResponse, path: string): string[] {
    const where = `${observed.method} ${path} → ${observed.status}`;
    const pathKnown = ['get', 'post', 'patch', 'put', 'delete'].some((method) => this.operationFor(method, path));
    const expected = pathKnown ? 405 : 404;
    if (observed.status === 429) {
      if (!observed.headers.has('retry-after')) return [`${where}: Retry-After missing`];
    } else if (observed.status !== expected) {
      return [
        `${where}: not an operation of the document, so ${expected} was expected (${observed.text.slice(0, 200)})`,
      ];
    }
    const problems: string[] = [];
    if (!observed.headers.has('x-request-id')) problems.push(`${where}: X-Request-Id missing`);
    if (observed.status === 405 && !observed.headers.has('allow')) problems.push(`${where}: Allow missing`);
    if (observed.method.toUpperCase() !== 'HEAD') {
      let body: unknown;
      try {
        body = JSON.parse(observed.text);
      } catch {
        return [...problems, `${where}: body is not the Error JSON`];
      }
      for (const error of this.schemaErrors(ERROR_SCHEMA, body)) problems.push(`${where}: body ${error}`);
    }
    return problems;
  }
}

const contracts = new Map<string, Promise<OpenApiContract>>();
/** Contracts by the exact text of the document: services that serve the same document share its compiled schemas. */
const contractsByDocument = new Map<string, OpenApiContract>();

/**
 * A document a running service serves (`/openapi.json`, or
 * `/internal/openapi.json` with the admin token), fetched once per service. Its
 * schemas compile once per test process for each distinct document text,
 * not once per service: most test files boot a service serving the same one.
 */
export function servedContract(documentUrl: string, headers: Record<string, string> = {}): Promise<OpenApiContract> {
  let contract = contracts.get(documentUrl);
  if (contract === undefined) {
    contract = fetch(documentUrl, { headers }).then(async (response) => {
      if (response.status !== 200) throw new Error(`GET ${documentUrl} answered ${response.status}`);
      const text = await response.text();
      let compiled = contractsByDocument.get(text);
      if (compiled === undefined) {
        compiled = new OpenApiContract(JSON.parse(text) as Json);
        contractsByDocument.set(text, compiled);
      }
      return compiled;
    });
    contracts.set(documentUrl, contract);
  }
  return contract;
}
