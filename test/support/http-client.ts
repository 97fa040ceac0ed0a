import { AssertionError } from 'node:assert';
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
  /** A raw body sent as is (for malformed JSON tests). */
  rawBody?: string;
  headers?: Record<string, string>;
}

async function send(url: string, method: string, options: CallOptions): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/**
 * Real HTTP against the public listener. Every response is checked against
 * the OpenAPI document the service serves (status, body schema, headers), so
 * an undocumented status or a drifted shape fails the test that received it.
 */
export function publicApi(service: Pick<TestService, 'publicUrl'>) {
  return async (method: string, path: string, options: CallOptions = {}): Promise<HttpResult<any>> => {
    const result = await send(`${service.publicUrl}${path}`, method, options);
    const problems = (await servedContract(service.publicUrl)).problems({ method, url: path, ...result });
    if (problems.length > 0) {
      throw new AssertionError({ message: `The response departs from /openapi.json:\n${problems.join('\n')}` });
    }
    return result;
  };
}

/** Real HTTP against the internal listener, with the admin token unless told otherwise. */
export function internalApi(service: TestService) {
  return (
    method: string,
    path: string,
    options: CallOptions & { token?: string | null } = {},
  ): Promise<HttpResult<any>> => {
    const headers = { ...options.headers };
    const token = options.token === undefined ? service.adminToken : options.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    return send(`${service.adminUrl}${path}`, method, { ...options, headers });
  };
}
