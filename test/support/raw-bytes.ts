import { connect } from 'node:net';
import type { HttpResult } from './http-client';

/** A response to bytes written as they are, and whether the server closed the connection after it. */
export interface RawBytesAnswer {
  result: HttpResult;
  closed: boolean;
}

/**
 * Writes bytes to a listener as they are (no HTTP client would send a
 * malformed header line or 20 KiB of headers) and reads the one response
 * back. `closed` is whether the server ended the connection within a moment
 * of its answer.
 */
export function sendRawBytes(baseUrl: string, bytes: string): Promise<RawBytesAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    let closed = false;
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      const [head = '', text = ''] = received.split('\r\n\r\n', 2);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = new Headers();
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ result: { status: Number(statusLine.split(' ')[1]), headers, text, body }, closed });
    };
    const timer = setTimeout(finish, 1_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('error', reject);
  });
}

/**
 * Writes bytes to a listener as they are and reads everything the server
 * sends until it closes the connection (several pipelined answers, say);
 * fails when it is still open after `timeoutMs`.
 */
export function readUntilClosed(baseUrl: string, bytes: string, timeoutMs = 5_000): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection stayed open after:\n${received}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}
