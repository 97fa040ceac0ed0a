import { AssertionError } from 'node:assert';
import { Agent, request } from 'node:http';
import { servedContract } from './openapi-contract';
import type { TestService } from './test-service';

export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: T;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** A raw body sent as is (for malformed JSON or bytes that are not UTF-8). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/**
 * Every test request's connections, kept alive between requests as fetch's
 * pool keeps them. node:http rather than fetch: on Node 20 fetch costs
 * several times the CPU per request, and the suite sends tens of thousands.
 */
const agent = new Agent({ keepAlive: true });

/** A response read to its end. */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One request over the shared pool, its body read to the end. Sends what
 * fetch sends unless told otherwise (`accept: *\/*`, the body's length) and,
 * like fetch with `redirect: 'manual'`, follows no redirect.
 */
export function roundTrip(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<HttpAnswer> {
  const sent: Record<string, string> = { accept: '*/*', ...headers };
  // node:http frames a DELETE's or a GET's body only when told its length (fetch always says it).
  if (body !== undefined) sent['content-length'] = String(Buffer.byteLength(body));
  return new Promise<HttpAnswer>((resolve, reject) => {
    const outgoing = request(url, { method, headers: sent, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const received = new Headers();
        const raw = response.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) received.append(raw[i]!, raw[i + 1]!);
        resolve({ status: response.statusCode ?? 0, headers: received, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    // Which request failed, and on which connection: a bare `socket hang up` names neither.
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const connection = outgoing.reusedSocket ? 'a kept-alive connection' : 'a new connection';
      reject(
        Object.assign(new Error(`${method} ${url} on ${connection}: ${error.message}`, { cause: error }), {
          code: error.code,
        }),
      );
    });
    outgoing.end(body);
  });
}

async function send(url: string, method: string, options: CallOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const answer = await roundTrip(url, method, headers, body);
  let parsed: unknown;
  try {
    parsed = answer.text === '' ? undefined : JSON.parse(answer.text);
  } catch {
    parsed = undefined;
  }
  return { status: answer.status, headers: answer.headers, text: answer.text, body: parsed };
}

/**
 * Real HTTP against the public listener. Every response is checked against
 * the OpenAPI document the service serves (status, body schema, headers), so
 * an undocumented status or a drifted shape fails the test that received it.
 */
export function publicApi(service: Pick<TestService, 'publicUrl'>) {
  return async (method: string, path: string, options: CallOptions = {}): Promise<HttpResult<any>> => {
    const result = await send(`${service.publicUrl}${path}`, method, options);
    const contract = await servedContract(`${service.publicUrl}/openapi.json`);
    const problems = contract.problems({ method, url: path, ...result });
    if (problems.length > 0) {
      throw new AssertionError({ message: `The response departs from /openapi.json:\n${problems.join('\n')}` });
    }
    return result;
  };
}

/** The dashboard answers people in HTML (docs/dashboard.md); its pages are no operation of the internal API. */
const DASHBOARD_PATHS = /^\/internal\/dashboard(?:[/?]|$)/;

/**
 * Real HTTP against the internal listener, with the admin token unless told
 * otherwise. Every response of the internal API is checked against
 * `/internal/openapi.json` as the public ones are against `/openapi.json`.
 */
export function internalApi(service: TestService) {
  return async (
    method: string,
    path: string,
    options: CallOptions & { token?: string | null } = {},
  ): Promise<HttpResult<any>> => {
    // Fetched before the request: a test that spends the failure budget must not starve the document's fetch.
    const contract = await servedContract(`${service.adminUrl}/internal/openapi.json`, {
      authorization: `Bearer ${service.adminToken}`,
    });
    const headers = { ...options.headers };
    const token = options.token === undefined ? service.adminToken : options.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    const result = await send(`${service.adminUrl}${path}`, method, { ...options, headers });
    if (DASHBOARD_PATHS.test(path)) return result;
    const problems = contract.problems({ method, url: path, ...result });
    if (problems.length > 0) {
      throw new AssertionError({
        message: `The response departs from /internal/openapi.json:\n${problems.join('\n')}`,
      });
    }
    return result;
  };
}
