import { LRUCache } from 'lru-cache';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dispatcher, Pool } from 'undici';
import {
  isPortAllowed,
  portOf,
  resolvePublicAddress,
  type AddressLookup,
  type ParsedCidr,
} from '../../../libs/webhooks';
import type { AttemptOutcome } from '../webhook-event-types';

/**
 * The part of a response body kept as the attempt's excerpt, and all that is
 * ever read of it: past this the response is destroyed (its socket is not
 * reused), so a receiver answering megabytes costs no more than one that
 * answers a line.
 */
export const MAX_RESPONSE_BYTES = 1024;
/**
 * Once the status has come, how long the body may take (the whole of what is
 * read of it, not each chunk): the
 * status is the answer, the body only the excerpt kept for the log. A body
 * that stalls or trickles must not hold the attempt, its lease and one of
 * the worker's slots until the deadline, nor stretch the attempt's duration
 * (the subscription's health figures) to it.
 */
export const BODY_GRACE_MS = 1_000;

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
  /** The receiver's HTTP status; null when none arrived (timeout, network error, blocked host). */
  httpStatus: number | null;
  /** The first MAX_RESPONSE_BYTES of the response body as text (invalid UTF-8 replaced); null without a response. */
  responseExcerpt: string | null;
  /**
   * Why a `network_error` had no answer, for the operators' log: the error's
   * code and message (`CERT_HAS_EXPIRED: certificate has expired`,
   * `ECONNREFUSED: …`); null for every other outcome. Never recorded with the
   * attempt: it is this instance's view of the network, not the receiver's answer.
   */
  networkError: string | null;
}

/** At most this much of a network error's message is kept: a code and its sentence. */
const NETWORK_ERROR_CHARS = 200;

/** `CODE: message` of a failed exchange, its cause's when undici wraps one (a TLS or socket error). */
function networkErrorOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const source = typeof cause === 'object' && cause !== null ? cause : error;
  const { code, message } = source as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(source);
  return (typeof code === 'string' ? `${code}: ${text}` : text).slice(0, NETWORK_ERROR_CHARS);
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  excerpt: string;
}

/** A `lookup` that answers with the address already checked, so no second DNS query can change it. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/** Keep-alive pools kept at once (one per receiver origin and checked address); the least recently used closes. */
const MAX_POOLS = 512;

/**
 * undici, loaded by the first attempt rather than at start: an instance that
 * never delivers (role `api`, the CLI) never holds it (about 4 MiB of RSS).
 */
let undiciLoading: Promise<typeof import('undici')> | undefined;
export function loadDeliveryClient(): Promise<typeof import('undici')> {
  undiciLoading ??= import('undici');
  return undiciLoading;
}

/**
 * Sends one webhook attempt over HTTPS. The host is resolved once and
 * refused if any address is not public (`blocked_host`); the connection then
 * goes to exactly that address while TLS still verifies the host name.
 * Redirects are never followed (a 3xx is just a status), and the response
 * body is read to at most 1 KiB: its status, Retry-After and that excerpt
 * are all that leave this class of what the receiver says.
 */
export class WebhookSender {
  // One keep-alive pool (undici) per origin and checked address: a pool only ever connects to the address
  // it was made for, so a receiver whose name now resolves elsewhere gets a pool of its own. Keep-alive saves
  // a TLS handshake per attempt to a busy receiver. Idle sockets close after 4 s, before typical servers (5 s
  // and up) close them under us, which would surface as a spurious network_error.
  private readonly pools = new LRUCache<string, Pool>({
    max: MAX_POOLS,
    dispose: (pool, _key, reason) => {
      if (reason === 'evict') pool.close().catch(() => undefined);
    },
  });

  /** `loadClient` loads undici (a test may slow it down); the first attempt waits for it. */
  constructor(private readonly loadClient: () => Promise<typeof import('undici')> = loadDeliveryClient) {}

  async send(webhook: OutgoingWebhook, options: SendOptions): Promise<SendResult> {
    // Loaded before the clock starts: the receiver's timeout and the attempt's duration are the exchange's own,
    // never the time this instance takes to load its client on its first attempt.
    const { Pool: UndiciPool } = await this.loadClient();
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const result = (outcome: AttemptOutcome, retryAfter?: string, aborted = false): SendResult => ({
      outcome,
      retryAfter,
      durationMs: elapsed(),
      aborted,
      httpStatus: null,
      responseExcerpt: null,
      networkError: null,
    });
    // A function, not a narrowed property: the signal can fire during any await below.
    const callerAborted = (): boolean => options.signal?.aborted === true;
    if (callerAborted()) return result('network_error', undefined, true);
    /** A `network_error` with what failed, for the operators' log. */
    const failed = (error: unknown): SendResult => ({
      ...result('network_error'),
      networkError: networkErrorOf(error),
    });

    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch (error) {
      return failed(error);
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
      if (!resolution.ok)
        return resolution.reason === 'network_error' ? failed(resolution.error) : result('blocked_host');
      const port = portOf(url);
      // Checked again here: the setting may have changed since the subscription was made.
      if (!isPortAllowed(port, resolution.address, options.allowedPrivate, options.allowedPorts)) {
        return result('blocked_host');
      }

      const pool = this.poolFor(UndiciPool, url.origin, host, resolution.address, resolution.family, options.timeoutMs);
      const request: Dispatcher.RequestOptions = {
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...webhook.headers, 'content-length': String(webhook.body.length) },
        body: webhook.body,
        signal: deadline.signal,
      };
      const exchange = await exchangeOver(pool, request, deadline.signal);
      if (exchange === 'aborted') return result('timeout', undefined, callerAborted());
      if ('failure' in exchange) return failed(exchange.failure);
      return {
        ...result(exchange.status, exchange.retryAfter),
        httpStatus: exchange.status,
        responseExcerpt: exchange.excerpt,
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  destroy(): void {
    for (const pool of this.pools.values()) pool.destroy().catch(() => undefined);
    this.pools.clear();
  }

  private poolFor(
    UndiciPool: typeof Pool,
    origin: string,
    host: string,
    address: string,
    family: 4 | 6,
    timeoutMs: number,
  ): Pool {
    const key = `${origin} ${address} ${timeoutMs}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      pool = new UndiciPool(origin, {
        keepAliveTimeout: 4_000,
        connect: {
          // undici's own connect deadline (10 s) covers the TCP connect and the TLS handshake, and an abort
          // does not cut it: a receiver that never finishes its handshake must not outlast the attempt's.
          timeout: timeoutMs,
          lookup: pinnedLookup(address, family),
          // SNI and certificate checks use the name; an IP literal host has no SNI.
          ...(isIP(host) === 0 ? { servername: host } : {}),
        },
      });
      this.pools.set(key, pool);
    }
    return pool;
  }
}

/**
 * One request and its answer. The status is the answer; the body is read to
 * MAX_RESPONSE_BYTES at most, within BODY_GRACE_MS of the status, and a body
 * cut short (reset, deadline, grace) still leaves the status and what was read.
 */
async function exchangeOver(
  pool: Pool,
  request: Dispatcher.RequestOptions,
  deadline: AbortSignal,
): Promise<Answer | 'aborted' | { failure: unknown }> {
  let response: Dispatcher.ResponseData;
  try {
    // Raced with the deadline: undici may still be connecting when it passes (see poolFor), and the
    // attempt ends then whatever undici does, so it never outlives its lease.
    const pending = pool.request(request);
    pending.catch(() => undefined);
    const answered = await Promise.race([pending, abortedBy(deadline)]);
    if (answered === 'aborted') {
      // An answer that arrives after the deadline is not read: its body goes with the socket.
      void pending.then(
        (late) => late.body.destroy(),
        () => undefined,
      );
      return 'aborted';
    }
    response = answered;
  } catch (error) {
    return deadline.aborted ? 'aborted' : { failure: error };
  }
  const retryAfter = response.headers['retry-after'];
  const chunks: Buffer[] = [];
  let received = 0;
  const stalled = setTimeout(() => response.body.destroy(), BODY_GRACE_MS);
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const room = MAX_RESPONSE_BYTES - received;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      received += kept.length;
      // Nothing past the excerpt is read: the rest of the body dies with the socket.
      if (received >= MAX_RESPONSE_BYTES) break;
    }
  } catch {
    // The deadline, the grace or the receiver ended the body: what was read stands.
  } finally {
    clearTimeout(stalled);
    if (!response.body.readableEnded) response.body.destroy();
  }
  return {
    status: response.statusCode,
    retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
    excerpt: excerptOf(Buffer.concat(chunks, received)),
  };
}

/** Settles with `aborted` when the signal fires (at once if it already has). */
function abortedBy(signal: AbortSignal): Promise<'aborted'> {
  if (signal.aborted) return Promise.resolve('aborted');
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
}

/**
 * A body's first bytes as text: invalid UTF-8 (a character cut at the limit
 * included) becomes U+FFFD, and so does NUL, which PostgreSQL text refuses.
 */
export function excerptOf(bytes: Buffer): string {
  return bytes.toString('utf8').replaceAll('\u0000', '\uFFFD');
}
