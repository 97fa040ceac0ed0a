import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a receiver got: the raw body bytes, exactly as sent. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: number;
  /** The parsed envelope (the body is always JSON here). */
  body: any;
}

/** How to answer one request. */
export type Reply =
  | {
      status: number;
      headers?: Record<string, string>;
      body?: string;
      delayMs?: number;
      /** Sends the status, the headers and `body`, then never ends the body (until the receiver closes). */
      stallBody?: boolean;
    }
  /** Never answer (until the receiver closes). */
  | 'hang';

export type ReplyPlan = (request: ReceivedRequest, index: number) => Reply;

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>`; add a path of your choice. */
  readonly origin: string;
  readonly requests: ReceivedRequest[];
  /** Requests being answered right now (for the in-flight cap). */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Replaces how the next requests are answered; the default is 200. */
  reply(plan: ReplyPlan): void;
  /** Resolves once `predicate` holds over the requests so far; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export interface ReceiverCertificate {
  key: Buffer;
  cert: Buffer;
  certFile: string;
}

/**
 * Makes a self-signed certificate for 127.0.0.1 (its own trust anchor) in
 * `directory`, with openssl. The test runner does this once per run and
 * points NODE_EXTRA_CA_CERTS at it, which Node reads only at process start.
 */
export function generateReceiverCertificate(directory: string): ReceiverCertificate {
  const keyFile = join(directory, 'receiver-key.pem');
  const certFile = join(directory, 'receiver-cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=Test webhook receiver',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}

/** The run's certificate (TEST_RECEIVER_CERT_DIR, set by run-tests), else a fresh one. */
export function receiverCertificate(): ReceiverCertificate {
  const directory = process.env['TEST_RECEIVER_CERT_DIR'];
  if (directory !== undefined && existsSync(join(directory, 'receiver-cert.pem'))) {
    const certFile = join(directory, 'receiver-cert.pem');
    return { key: readFileSync(join(directory, 'receiver-key.pem')), cert: readFileSync(certFile), certFile };
  }
  return generateReceiverCertificate(mkdtempSync(join(tmpdir(), 'webhook-receiver-')));
}

/**
 * A real HTTPS server on 127.0.0.1 that records every request and answers as told.
 * `keepRequests: false` keeps none of them (`requests` stays empty), for a bench
 * that counts hundreds of thousands of arrivals in its plan and must not hold them all.
 */
export async function startHttpsReceiver(
  initial: ReplyPlan = () => ({ status: 200 }),
  certificate: ReceiverCertificate = receiverCertificate(),
  options: { keepRequests?: boolean } = {},
): Promise<HttpsReceiver> {
  const keepRequests = options.keepRequests ?? true;
  const { key, cert } = certificate;
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let plan = initial;
  let inFlight = 0;
  let maxInFlight = 0;
  let receivedCount = 0;

  const answer = (response: ServerResponse, reply: Exclude<Reply, 'hang'>): void => {
    if (response.destroyed) return;
    response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
    if (reply.stallBody === true) {
      response.write(reply.body ?? '');
      hanging.add(response);
      return;
    }
    response.end(reply.body ?? '');
  };

  const server: Server = createServer({ key, cert }, (request: IncomingMessage, response: ServerResponse) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let counted = true;
    const done = (): void => {
      if (!counted) return;
      counted = false;
      inFlight -= 1;
    };
    response.on('close', done);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      const received: ReceivedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        rawBody,
        receivedAt: Date.now(),
        body,
      };
      if (keepRequests) requests.push(received);
      const reply = plan(received, receivedCount);
      receivedCount += 1;
      for (const wake of [...waiters]) wake();
      if (reply === 'hang') {
        hanging.add(response);
        return;
      }
      if (reply.delayMs !== undefined && reply.delayMs > 0) {
        setTimeout(() => answer(response, reply), reply.delayMs);
      } else {
        answer(response, reply);
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `https://127.0.0.1:${port}`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    reply(next: ReplyPlan): void {
      plan = next;
    },
    waitFor(predicate, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (!predicate(requests)) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(requests);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests received)`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close(): Promise<void> {
      for (const response of hanging) response.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
