import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  isPortAllowed,
  portOf,
  resolvePublicAddress,
  type AddressLookup,
  type ParsedCidr,
} from '../../../libs/webhooks';
import type { AttemptOutcome } from '../webhook-event-types';

/** Enough of a response body to keep a keep-alive socket reusable; anything longer is cut off. */
export const MAX_RESPONSE_BYTES = 4096;

export interface OutgoingWebhook {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
}

export interface SendOptions {
  /** Deadline over the whole exchange: name resolution, connect, TLS, request and response status. */
  timeoutMs: number;
  allowedPrivate: readonly ParsedCidr[];
  /** WEBHOOK_ALLOWED_PORTS; 443 only by default. An address in `allowedPrivate` may use any port. */
  allowedPorts?: readonly number[];
  /** Cuts the attempt short (shutdown); the result then says `aborted`. */
  signal?: AbortSignal;
  /** Name resolution, replaceable in tests; the system resolver by default. */
  lookup?: AddressLookup;
}

export interface SendResult {
  outcome: AttemptOutcome;
  /** The receiver's Retry-After, when it sent one. */
  retryAfter: string | undefined;
  durationMs: number;
  /** Cut short by the caller's signal: no outcome to record. */
  aborted: boolean;
}

/** A `lookup` that answers with the address already checked, so no second DNS query can change it. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * Sends one webhook attempt over HTTPS. The host is resolved once and
 * refused if any address is not public (`blocked_host`); the connection then
 * goes to exactly that address while TLS still verifies the host name.
 * Redirects are never followed (a 3xx is just a status), the response body
 * is read to at most 4 KiB, and nothing the receiver says leaves this class
 * except its status and Retry-After.
 */
export class WebhookSender {
  // Keep-alive saves a TLS handshake per attempt to a busy receiver. Idle
  // sockets close after 4 s, before typical servers (5 s and up) close them
  // under us, which would surface as a spurious network_error.
  private readonly agent = new Agent({ keepAlive: true, timeout: 4_000, scheduling: 'lifo' });

  async send(webhook: OutgoingWebhook, options: SendOptions): Promise<SendResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const result = (outcome: AttemptOutcome, retryAfter?: string, aborted = false): SendResult => ({
      outcome,
      retryAfter,
      durationMs: elapsed(),
      aborted,
    });
    // A function, not a narrowed property: the signal can fire during any await below.
    const callerAborted = (): boolean => options.signal?.aborted === true;
    if (callerAborted()) return result('network_error', undefined, true);

    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return result('network_error');
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
    const onCallerAbort = (): void => deadline.abort();
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const resolution = await Promise.race([
        resolvePublicAddress(host, options.allowedPrivate, options.lookup),
        new Promise<null>((resolve) => deadline.signal.addEventListener('abort', () => resolve(null), { once: true })),
      ]);
      if (resolution === null) return result('timeout', undefined, callerAborted());
      if (!resolution.ok) return result(resolution.reason);
      const port = portOf(url);
      // Checked again here: the setting may have changed since the subscription was made.
      if (!isPortAllowed(port, resolution.address, options.allowedPrivate, options.allowedPorts)) {
        return result('blocked_host');
      }

      const requestOptions: RequestOptions = {
        protocol: 'https:',
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...webhook.headers, 'content-length': String(webhook.body.length) },
        agent: this.agent,
        lookup: pinnedLookup(resolution.address, resolution.family),
      };
      // SNI and certificate checks use the name; an IP literal host has no SNI.
      if (isIP(host) === 0) requestOptions.servername = host;
      const exchange = await this.exchange(requestOptions, webhook.body, deadline.signal, started + options.timeoutMs);
      if (exchange === 'aborted') return result('timeout', undefined, callerAborted());
      if (exchange === 'network_error') return result('network_error');
      return result(exchange.status, exchange.retryAfter);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  destroy(): void {
    this.agent.destroy();
  }

  private exchange(
    options: RequestOptions,
    body: Buffer,
    deadline: AbortSignal,
    deadlineAt: number,
  ): Promise<{ status: number; retryAfter: string | undefined } | 'aborted' | 'network_error'> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (
        value: { status: number; retryAfter: string | undefined } | 'aborted' | 'network_error',
      ): void => {
        if (settled) return;
        settled = true;
        resolve(value);
      };
      const request = httpsRequest(options);
      const onDeadline = (): void => {
        settle('aborted');
        request.destroy();
      };
      if (deadline.aborted) {
        onDeadline();
        return;
      }
      deadline.addEventListener('abort', onDeadline, { once: true });
      const stopWatching = (): void => deadline.removeEventListener('abort', onDeadline);

      request.on('response', (response: IncomingMessage) => {
        const retryAfter = response.headers['retry-after'];
        settle({
          status: response.statusCode ?? 0,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
        });
        stopWatching();
        // The status is the answer; the body is drained only so the socket can be reused,
        // and only up to the cap and the deadline.
        const drainTimer = setTimeout(() => request.destroy(), Math.max(0, deadlineAt - performance.now()));
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) request.destroy();
        });
        response.on('error', () => undefined);
        response.on('close', () => clearTimeout(drainTimer));
      });
      request.on('error', () => {
        stopWatching();
        settle('network_error');
      });
      request.end(body);
    });
  }
}
