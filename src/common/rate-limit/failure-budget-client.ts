import ipaddr from 'ipaddr.js';

/** Addresses with a colon already turned into their client: parsing one costs microseconds, a look-up far less. */
const knownPrefixes = new Map<string, string>();
/** Past this many, the look-ups start again empty: a host rotating addresses cannot make the map grow for ever. */
export const MAX_KNOWN_PREFIXES = 4096;

/**
 * Which addresses the failure budget counts as one client. An IPv4 address is
 * one client. An IPv6 host is given a whole /64 by its network (RFC 6177,
 * SLAAC) and picks addresses in it at will (privacy extensions rotate them
 * daily, a guesser every request), so an IPv6 client is its /64 prefix: a
 * single host cannot multiply its budget by changing addresses. An IPv4
 * address written as IPv6 (`::ffff:192.0.2.1`, what a dual-stack socket
 * reports) is the IPv4 address it carries.
 */
export function failureBudgetClient(address: string): string {
  // The common case, an IPv4 peer, costs a character search and no parse.
  if (!address.includes(':')) return address;
  let client = knownPrefixes.get(address);
  if (client === undefined) {
    client = prefixOf(address);
    if (knownPrefixes.size >= MAX_KNOWN_PREFIXES) knownPrefixes.clear();
    knownPrefixes.set(address, client);
  }
  return client;
}

function prefixOf(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    // Not an address (Fastify's `request.ip` always is one): counted under its own text.
    return address;
  }
  if (parsed instanceof ipaddr.IPv4) return parsed.toString();
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${parsed.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

/** How many addresses are remembered now (for the test that the memory stays bounded). */
export function knownPrefixCount(): number {
  return knownPrefixes.size;
}
