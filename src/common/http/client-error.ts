import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode } from '../errors/error-code';

/** What Node's HTTP parser reports, by its error code, and what the caller is told. */
const ANSWERS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    message: 'The request line and header fields are too large (at most 16 KiB in all).',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time.' },
};
const MALFORMED = { status: 400, message: 'The request is not valid HTTP/1.1.' };

/**
 * Answers a request that Node's HTTP parser refused before any request
 * object existed (header fields over 16 KiB, a malformed request line or
 * header, a request that never finished arriving), on both listeners. Fastify's
 * default answer has a body of its own shape and no request id; this one is the
 * contract's error body, `invalid_argument` as for every refused request shape
 * (413, 414, 415), with `X-Request-Id` equal to `request_id`, and closes the
 * connection, since nothing after the bad bytes can be trusted to start a request.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Node's own rule: never write into a response that has started on this socket.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    const { status, message } = ANSWERS[error.code ?? ''] ?? MALFORMED;
    const requestId = randomUUID();
    const body = JSON.stringify({ error: ErrorCode.InvalidArgument, message, request_id: requestId });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
}
