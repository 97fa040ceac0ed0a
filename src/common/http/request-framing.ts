import type { IncomingMessage, ServerResponse } from 'node:http';

/** A Host field value as RFC 3986 spells an authority's host and port (empty is allowed, RFC 9112 §3.2). */
const HOST_VALUE = /^[A-Za-z0-9\-._~%!$&'()*+,;=:[\]]*$/;

/**
 * What makes a request's framing or target untrustworthy, per RFC 9112, that
 * Node's parser lets through; null when nothing does. Each is answered
 * `400`: a proxy in front may have read the request otherwise than this
 * service would (request smuggling, a Host another hop routed by).
 * - an HTTP/1.1 request without Host (§3.2);
 * - several Host fields, or one whose value is not a host (§3.2: "MUST
 *   respond with a 400"); Node keeps the first and drops the rest;
 * - Transfer-Encoding on an HTTP/1.0 request (§6.1: "MUST treat … as if the
 *   framing is faulty … and close the connection"); Node obeys it.
 */
export function framingRefusal(request: IncomingMessage): string | null {
  const host = request.headers.host;
  if (host === undefined) return request.httpVersion === '1.1' ? 'HTTP/1.1 requests must carry a Host header.' : null;
  if (!HOST_VALUE.test(host)) return 'The Host header must be a host (and port), as a URL spells it.';
  const raw = request.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts += 1;
  }
  if (hosts > 1) return 'A request carries one Host header, not several.';
  if (request.httpVersion === '1.0' && request.headers['transfer-encoding'] !== undefined) {
    return 'An HTTP/1.0 request cannot carry Transfer-Encoding: its framing cannot be trusted.';
  }
  return null;
}

/**
 * Run by each listener's server for every request, before any framework
 * code, so that every answer obeys it, the router's own refusals included: a
 * request whose framing is refused, or one that asks for an `Upgrade`, is
 * answered with its connection closed. No protocol is upgraded to (RFC 9110
 * §7.8 lets a server ignore Upgrade), but Node's parser reads nothing more on
 * a connection after such a request: one pipelined behind it would wait for
 * ever. The refusal itself is answered by the conventions' hook, in the
 * contract's error body.
 */
export function closeAfterUntrustedFraming(request: IncomingMessage, response: ServerResponse): void {
  if (framingRefusal(request) !== null || asksForUpgrade(request)) response.setHeader('connection', 'close');
}

/** Node's parser stops at a request whose Connection names `upgrade` and that carries Upgrade. */
function asksForUpgrade(request: IncomingMessage): boolean {
  const connection = request.headers.connection;
  return (
    request.headers.upgrade !== undefined && connection !== undefined && /(^|,)\s*upgrade\s*(,|$)/i.test(connection)
  );
}
