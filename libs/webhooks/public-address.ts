import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A CIDR block. IPv4 blocks are held as their image inside ::ffff:0:0/96, so
 * one comparison covers `127.0.0.1` and `::ffff:127.0.0.1` alike: an IPv4
 * rule cannot be dodged by writing the address in its IPv6-mapped form.
 */
export interface ParsedCidr {
  /** The block as written (trimmed), for logs and error messages. */
  readonly text: string;
  readonly family: 4 | 6;
  /** Prefix length as written: 0–32 for IPv4, 0–128 for IPv6. */
  readonly prefixLength: number;
  /** First and last address of the block, as 128-bit values. */
  readonly first: bigint;
  readonly last: bigint;
}

export interface WebhookUrlOptions {
  /** Ports a URL may name (an https URL without one is 443); default 443 only. */
  allowedPorts?: readonly number[];
}

export const DEFAULT_ALLOWED_PORTS: readonly number[] = [443];

export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export type ResolvedAddress = { address: string; family: 4 | 6 };

export type AddressLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export type PublicAddressResolution =
  | { ok: true; address: string; family: 4 | 6 }
  | { ok: false; reason: 'blocked_host' }
  /** `error`: why the name did not resolve (the lookup's error, or none of its answers), for the operators' log. */
  | { ok: false; reason: 'network_error'; error: unknown };

const IPV4_MAPPED = 0xffffn << 32n;
const LOW_32_BITS = 0xffffffffn;

function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    // Leading zeros are refused: some resolvers read `010` as octal 8, so the
    // same text could name two different hosts.
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function ipv6Words(part: string, ipv4Tail: boolean): number[] | null {
  if (part === '') return [];
  const groups = part.split(':');
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (ipv4Tail && i === groups.length - 1 && group.includes('.')) {
      const ipv4 = parseIpv4(group);
      if (ipv4 === null) return null;
      words.push(Math.floor(ipv4 / 0x10000), ipv4 % 0x10000);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      words.push(parseInt(group, 16));
    } else {
      return null;
    }
  }
  return words;
}

function parseIpv6(text: string): bigint | null {
  const halves = text.split('::');
  let words: number[] | null;
  if (halves.length === 1) {
    words = ipv6Words(text, true);
    if (words === null || words.length !== 8) return null;
  } else if (halves.length === 2) {
    const [headText = '', tailText = ''] = halves;
    const head = ipv6Words(headText, false);
    const tail = ipv6Words(tailText, true);
    // `::` stands for at least one zero group.
    if (head === null || tail === null || head.length + tail.length > 7) return null;
    words = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    return null;
  }
  return words.reduce((acc, word) => (acc << 16n) | BigInt(word), 0n);
}

/** An address as a 128-bit value (IPv4 mapped into ::ffff:0:0/96), or null if it is not an IP address. */
function parseAddress(raw: string): { value: bigint; family: 4 | 6 } | null {
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  // A zone id (`fe80::1%eth0`, as a resolver may return it) picks an
  // interface; it does not change which address is meant.
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const ipv4 = parseIpv4(text);
  if (ipv4 !== null) return { value: IPV4_MAPPED | BigInt(ipv4), family: 4 };
  const ipv6 = parseIpv6(text);
  return ipv6 === null ? null : { value: ipv6, family: 6 };
}

/** Parses `10.0.0.0/8`, `fd00::/8` or a bare address (a one-address block). Null when invalid. */
export function parseCidr(text: string): ParsedCidr | null {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const addressText = slash < 0 ? trimmed : trimmed.slice(0, slash);
  if (addressText.includes('%') || addressText.includes('[')) return null;
  const address = parseAddress(addressText);
  if (address === null) return null;
  const width = address.family === 4 ? 32 : 128;
  let prefixLength = width;
  if (slash >= 0) {
    const prefixText = trimmed.slice(slash + 1);
    if (!/^(?:0|[1-9]\d{0,2})$/.test(prefixText)) return null;
    prefixLength = Number(prefixText);
    if (prefixLength > width) return null;
  }
  const hostBits = BigInt(width - prefixLength);
  const hostMask = (1n << hostBits) - 1n;
  // `192.168.1.0/2` is far more likely a typo for /24 than a wish to exempt a
  // quarter of the internet, so bits set past the prefix make the entry invalid.
  if ((address.value & hostMask) !== 0n) return null;
  return {
    text: trimmed,
    family: address.family,
    prefixLength,
    first: address.value,
    last: address.value | hostMask,
  };
}

/** Parses a CIDR list (such as WEBHOOK_ALLOW_PRIVATE_CIDRS split on commas); blank entries are skipped. */
export function parseCidrList(list: readonly string[]): ParsedCidr[] {
  const parsed: ParsedCidr[] = [];
  for (const entry of list) {
    if (entry.trim() === '') continue;
    const cidr = parseCidr(entry);
    if (cidr === null) {
      throw new Error(
        `invalid CIDR "${entry.trim()}": expected an IPv4 or IPv6 network such as 10.0.0.0/8 or fd00::/8, with no bits set after the prefix`,
      );
    }
    parsed.push(cidr);
  }
  return parsed;
}

function contains(cidr: ParsedCidr, value: bigint): boolean {
  return value >= cidr.first && value <= cidr.last;
}

/** False for anything that is not an IP address. */
export function cidrContains(cidr: ParsedCidr, address: string): boolean {
  const parsed = parseAddress(address);
  return parsed !== null && contains(cidr, parsed.value);
}

// Prefixes whose addresses carry the IPv4 address the packet ends up at, so
// the address is only as public as that IPv4 address: NAT64's well-known
// prefix (64:ff9b::/96, the way IPv6-only networks reach IPv4 receivers) and
// 6to4 (2002::/16). The local-use NAT64 prefix 64:ff9b:1::/48 is not unwrapped:
// its translator is by definition inside someone's network.
const NAT64 = { first: 0x0064ff9bn << 96n, last: (0x0064ff9bn << 96n) | LOW_32_BITS };
const SIX_TO_FOUR = { first: 0x2002n << 112n, last: (0x2002n << 112n) | ((1n << 112n) - 1n) };
// The deprecated IPv4-compatible form (::a.b.c.d, RFC 4291 2.5.5.1): no public
// host uses it, and ipaddr.js files it under `unicast`.
const IPV4_COMPATIBLE = { first: 0n, last: LOW_32_BITS };

function within(block: { first: bigint; last: bigint }, value: bigint): boolean {
  return value >= block.first && value <= block.last;
}

function bytesOf(value: bigint): number[] {
  return Array.from({ length: 16 }, (_, i) => Number((value >> BigInt(8 * (15 - i))) & 0xffn));
}

/**
 * The special-purpose ranges come from ipaddr.js (the IANA registries, kept
 * up to date by its maintainers) instead of a list kept here: an address is
 * public only when its `range()` is `unicast`. IPv4-mapped addresses are
 * judged by the IPv4 address inside; every other IPv6 special range
 * (`::ffff:0:0:0/96` IPv4-translated, Teredo `2001::/32`, `2001::/23`,
 * documentation, unique-local, ...) is refused.
 */
function isPublicValue(value: bigint, allow: readonly ParsedCidr[]): boolean {
  if (allow.some((cidr) => contains(cidr, value))) return true;
  if (within(NAT64, value)) return isPublicValue(IPV4_MAPPED | (value & LOW_32_BITS), allow);
  if (within(SIX_TO_FOUR, value)) return isPublicValue(IPV4_MAPPED | ((value >> 80n) & LOW_32_BITS), allow);
  if (within(IPV4_COMPATIBLE, value)) return false;
  const address = ipaddr.fromByteArray(bytesOf(value));
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) {
    return address.toIPv4Address().range() === 'unicast';
  }
  return address.range() === 'unicast';
}

/**
 * Whether a webhook may be delivered to this address. Anything that does not
 * parse as an IP address is not public (fail closed). Addresses inside an
 * `allow` block count as public: that is the test-rig exemption
 * (WEBHOOK_ALLOW_PRIVATE_CIDRS), empty in production.
 */
export function isPublicAddress(address: string, allow: readonly ParsedCidr[] = []): boolean {
  const parsed = parseAddress(address);
  return parsed !== null && isPublicValue(parsed.value, allow);
}

// Suffixes that only ever resolve inside a machine or a private network
// (RFC 6761 localhost, mDNS .local, RFC 8375 home.arpa, cloud-internal zones
// such as metadata.google.internal).
const RESERVED_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa'];

function isReservedName(hostname: string): boolean {
  // Single-label names (`localhost`, `metadata`, `intranet`, a Kubernetes
  // service) go to the resolver's search list, which means the operator's own
  // network.
  if (!hostname.includes('.')) return true;
  return RESERVED_SUFFIXES.some((suffix) => hostname.endsWith(suffix));
}

function isValidDnsName(hostname: string): boolean {
  return hostname.length <= 253 && hostname.split('.').every((label) => label.length > 0 && label.length <= 63);
}

/**
 * The subscription-time check of a webhook url. Names pass when they look
 * public; what they resolve to is judged at delivery by
 * {@link resolvePublicAddress}, because DNS can change after subscribing.
 * Reasons never echo an address, so the API cannot be used to probe a network.
 */
export function checkWebhookUrl(
  raw: unknown,
  allow: readonly ParsedCidr[] = [],
  options: WebhookUrlOptions = {},
): WebhookUrlCheck {
  const check = checkUrlShape(raw, allow);
  if (!check.ok) return check;
  let host = check.url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const allowedPorts = options.allowedPorts ?? DEFAULT_ALLOWED_PORTS;
  const address = isIP(host) !== 0 ? host : null;
  return isPortAllowed(portOf(check.url), address, allow, allowedPorts) ? check : portRefused(allowedPorts);
}

/** Everything checkWebhookUrl checks but the port rule, which for a name may depend on what it resolves to. */
function checkUrlShape(raw: unknown, allow: readonly ParsedCidr[]): WebhookUrlCheck {
  if (typeof raw !== 'string') return { ok: false, reason: 'url must be a string' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url must be an absolute URL' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'url must use https' };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'url must not contain a username or password' };
  }
  // A fragment is never sent (a client keeps it), so a stored one would only mislead; `#` alone stays in href.
  if (url.href.includes('#')) return { ok: false, reason: 'url must not contain a fragment (#…): it is never sent' };
  // WHATWG URL takes port 0, which no receiver can listen on: every delivery would fail to connect.
  if (url.port === '0') return { ok: false, reason: 'url port must be from 1 to 65535' };
  // WHATWG URL has already lowercased the host and rewritten every IPv4
  // spelling (2130706433, 0x7f.1, 0177.0.0.1, 127.1) as a dotted quad.
  let host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') return { ok: false, reason: 'url must have a host' };

  if (isIP(host) !== 0) {
    return isPublicAddress(host, allow) ? { ok: true, url } : { ok: false, reason: 'url host is not allowed' };
  }
  // `localhost.` is the same name as `localhost`.
  const name = host.replace(/\.+$/, '');
  if (name === '' || isReservedName(name)) return { ok: false, reason: 'url host is not allowed' };
  if (!isValidDnsName(name)) return { ok: false, reason: 'url host is not a valid host name' };
  return { ok: true, url };
}

// Names reserved for documentation and testing (RFC 2606, RFC 6761): never looked up at subscription,
// since they can only lead where their registry points them, never into the subscriber's network.
const DOCUMENTATION_NAMES = ['example.com', 'example.net', 'example.org'];
const DOCUMENTATION_SUFFIXES = ['.example', '.test', '.invalid'];

function isDocumentationName(name: string): boolean {
  return (
    DOCUMENTATION_NAMES.some((reserved) => name === reserved || name.endsWith(`.${reserved}`)) ||
    DOCUMENTATION_SUFFIXES.some((suffix) => name.endsWith(suffix))
  );
}

/** How long a subscription waits for its name to resolve before the delivery-time check is left to judge it. */
export const SUBSCRIPTION_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * {@link checkWebhookUrl}, then, for a name, what it resolves to now: any
 * address that is not public (and not in `allow`) refuses the url, as at
 * delivery. A name that does not resolve in time (or at all) is accepted:
 * DNS may not be set up yet, and every delivery resolves it again. A name
 * that resolves only into `allow` is exempt from the port rule, as its
 * addresses are.
 */
export async function checkWebhookUrlResolving(
  raw: unknown,
  allow: readonly ParsedCidr[] = [],
  options: WebhookUrlOptions & { lookup?: AddressLookup; lookupTimeoutMs?: number } = {},
): Promise<WebhookUrlCheck> {
  const check = checkUrlShape(raw, allow);
  if (!check.ok) return check;
  const host = check.url.hostname.replace(/\.+$/, '');
  // An address literal (IPv6 in brackets) was judged whole; a documentation name is not looked up.
  if (host.startsWith('[') || isIP(host) !== 0 || isDocumentationName(host))
    return checkWebhookUrl(raw, allow, options);
  const allowedPorts = options.allowedPorts ?? DEFAULT_ALLOWED_PORTS;
  const port = portOf(check.url);
  const resolved = await lookupWithin(host, options.lookup ?? defaultLookup, options.lookupTimeoutMs);
  if (resolved !== null && !resolved.every((entry) => isPublicAddress(entry.address, allow))) {
    return { ok: false, reason: 'url host is not allowed' };
  }
  const exempt =
    resolved !== null && resolved.every((entry) => isPortAllowed(port, entry.address, allow, allowedPorts));
  return exempt || isPortAllowed(port, null, allow, allowedPorts) ? check : portRefused(allowedPorts);
}

/** The addresses a name resolves to, or null when it does not resolve (in time). */
async function lookupWithin(
  host: string,
  lookup: AddressLookup,
  timeoutMs = SUBSCRIPTION_LOOKUP_TIMEOUT_MS,
): Promise<ResolvedAddress[] | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const resolved = await Promise.race([
      lookup(host),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs);
      }),
    ]);
    return resolved === null || resolved.length === 0 ? null : resolved;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** The port an https URL connects to. */
export function portOf(url: URL): number {
  return url.port === '' ? 443 : Number(url.port);
}

function portRefused(allowedPorts: readonly number[]): WebhookUrlCheck {
  return { ok: false, reason: `url port must be ${allowedPorts.join(' or ')}` };
}

/**
 * The port rule (WEBHOOK_ALLOWED_PORTS, 443 by default): a webhook cannot be
 * aimed at an internal service's port on an otherwise public host. An
 * address inside the test-rig exemption (WEBHOOK_ALLOW_PRIVATE_CIDRS) is
 * exempt; a name is only exempt once it has resolved to such an address.
 */
export function isPortAllowed(
  port: number,
  address: string | null,
  allow: readonly ParsedCidr[],
  allowedPorts: readonly number[] = DEFAULT_ALLOWED_PORTS,
): boolean {
  if (allowedPorts.includes(port)) return true;
  return address !== null && allow.some((cidr) => cidrContains(cidr, address));
}

async function defaultLookup(hostname: string): Promise<ResolvedAddress[]> {
  const results = await dns.lookup(hostname, { all: true, verbatim: true });
  return results.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
}

/**
 * The delivery-time check. It resolves once and refuses if any address is not
 * public, since an attacker controlling DNS can mix a public and a private
 * answer; the caller then connects to exactly the address returned (keeping
 * the host name for TLS), so no second lookup can change the answer between
 * the check and the connection.
 */
export async function resolvePublicAddress(
  hostname: string,
  allow: readonly ParsedCidr[],
  lookup: AddressLookup = defaultLookup,
): Promise<PublicAddressResolution> {
  let host = hostname.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') return { ok: false, reason: 'blocked_host' };

  const literal = isIP(host);
  if (literal !== 0) {
    return isPublicAddress(host, allow)
      ? { ok: true, address: host, family: literal === 6 ? 6 : 4 }
      : { ok: false, reason: 'blocked_host' };
  }

  let resolved: ResolvedAddress[];
  try {
    resolved = await lookup(host);
  } catch (error) {
    return { ok: false, reason: 'network_error', error };
  }
  const first = resolved[0];
  if (first === undefined) return { ok: false, reason: 'network_error', error: new Error(`no address for ${host}`) };
  if (!resolved.every((entry) => isPublicAddress(entry.address, allow))) return { ok: false, reason: 'blocked_host' };
  // The family comes from the address itself, not from what the lookup claimed.
  return { ok: true, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}
