import { Agent, request } from 'node:http';

export interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/**
 * One HTTP/1.1 request with the request target sent exactly as given
 * (`fetch` normalises URLs, so it cannot send `/%69nternal`, `/./x` or an
 * absolute-form target such as `http://x/internal/organisers`).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  target: string,
  options: { headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<RawResult> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path: target,
        headers: {
          // Node sends a DELETE body without a length unless told: the server would read it as a next request.
          ...(options.body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
        agent: options.agent ?? false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
