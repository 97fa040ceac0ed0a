import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '../errors/error-code';
import { requestIdFor } from '../request-id/request-id';

/** What Node's HTTP parser reports, by its error code, and what the caller is told. */
const ANSWERS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    message: 'The request line and header fields are too large (at most 16 KiB in all).',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time.' },
};
const MALFORMED = { status: 400, message: 'The request is not valid HTTP/1.1.' };

/** What Node's HTTP server keeps on a connection's socket: the response in progress, and the request being read. */
type ServerSocket = Duplex & {
  _httpMessage?: {
    headersSent?: boolean;
    writableFinished?: boolean;
    once?: (event: 'finish', listener: () => void) => unknown;
  } | null;
  parser?: { incoming?: { complete?: boolean } | null } | null;
};

/** Connections waiting for earlier answers before their bad bytes' (the parser reports them again with each chunk). */
const waitingForEarlierAnswers = new WeakSet<Duplex>();

/** How long bad bytes' answer waits for the answers of the requests before them, at most. */
const EARLIER_ANSWERS_WAIT_MS = 10_000;

/**
 * Answers a request that Node's HTTP parser refused before any request
 * object existed (header fields over 16 KiB, a malformed request line or
 * header, a request that never finished arriving), on both listeners. Fastify's
 * default answer has a body of its own shape and no request id; this one is the
 * contract's error body, `invalid_argument` as for every refused request shape
 * (413, 414, 415), with `X-Request-Id` equal to `request_id`, and closes the
 * connection, since nothing after the bad bytes can be trusted to start a request.
 *
 * When the bad bytes come after whole requests pipelined before them, those
 * are being handled: their answers go first, in the order they came (RFC
 * 9112 §9.3.2), then this one (within EARLIER_ANSWERS_WAIT_MS). When they are
 * part of the request being read (its body, say), or that request ran out of
 * time, its answer can never come: this one is written at once.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const server = socket as ServerSocket;
  const readingOne = server.parser?.incoming != null && server.parser.incoming.complete !== true;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || readingOne) {
    answerAndClose(error, server);
    return;
  }
  if (waitingForEarlierAnswers.has(socket)) return;
  waitingForEarlierAnswers.add(socket);
  const timer = setTimeout(() => answerAndClose(error, server), EARLIER_ANSWERS_WAIT_MS);
  timer.unref();
  afterEarlierAnswers(server, () => {
    clearTimeout(timer);
    answerAndClose(error, server);
  });
}

/** Runs `then` once no response is in progress on the connection (Node hands it the next queued one at each finish). */
function afterEarlierAnswers(socket: ServerSocket, then: () => void): void {
  const inFlight = socket._httpMessage;
  if (inFlight == null || inFlight.writableFinished === true || inFlight.once === undefined || socket.destroyed) {
    then();
    return;
  }
  inFlight.once('finish', () => setImmediate(() => afterEarlierAnswers(socket, then)));
}

function answerAndClose(error: Error & { code?: string }, socket: ServerSocket): void {
  if (socket.destroyed) return;
  // Node's own rule: never write into a response that has started on this socket.
  if (socket.writable && socket._httpMessage?.headersSent !== true) {
    const { status, message } = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const requestId = randomUUID();
    const body = JSON.stringify({ error: ErrorCode.InvalidArgument, message, request_id: requestId });
    // Ended, not destroyed at once: what earlier answers left in the send buffer, and this one, go out first.
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Date: ${new Date().toUTCString()}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
    setTimeout(() => socket.destroy(), 1_000).unref();
    return;
  }
  socket.destroy(error);
}

/**
 * An `Expect` other than `100-continue`, which Node answers `417` itself,
 * bare: answered in the contract's error body with `X-Request-Id`, as every
 * other refusal of the request's shape. The request is not handled.
 */
export function answerUnmetExpectation(request: IncomingMessage, response: ServerResponse): void {
  const requestId = requestIdFor(request);
  const body = JSON.stringify({
    error: ErrorCode.InvalidArgument,
    message: 'The only expectation this service meets is Expect: 100-continue.',
    request_id: requestId,
  });
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  response.end(body);
}
