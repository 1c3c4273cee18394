import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { OutboundRequestError } from './outbound-request.error.js';

/** Ports a public target may use; any port is allowed together with private addresses. */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [80, 443];

/**
 * Canonical text of an address, IPv4-mapped IPv6 unwrapped (`::ffff:127.0.0.1` → `127.0.0.1`),
 * or undefined when it is not an IP address at all.
 */
export function canonicalAddress(address: string): string | undefined {
  const bare = stripBrackets(address);
  if (isIP(bare) === 0) return undefined;
  try {
    return ipaddr.process(bare).toString();
  } catch {
    return undefined;
  }
}

/**
 * Why an address may not be connected to, or null when it may. Without `allowPrivate` only
 * ipaddr.js's `unicast` range passes (public addresses), checked after unwrapping IPv4-mapped
 * IPv6; the deprecated IPv4-compatible block `::/96` (which ipaddr.js calls unicast) is refused
 * too. With `allowPrivate` any well-formed address passes (local development and tests).
 */
export function addressRefusal(address: string, allowPrivate: boolean): string | null {
  const bare = stripBrackets(address);
  if (isIP(bare) === 0) return `${address} is not an IP address`;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(bare);
  } catch {
    return `${address} is not an IP address`;
  }
  if (allowPrivate) return null;
  const range = parsed.range();
  if (range !== 'unicast') return `${parsed.toString()} is in the ${range} range`;
  if (parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE)) return `${parsed.toString()} is an IPv4-compatible address`;
  return null;
}

const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** What a checked URL points at. */
export interface OutboundTarget {
  url: URL;
  /** `https://host:port` as undici keys its pools. */
  origin: string;
  /** Host name or IP literal, without IPv6 brackets. */
  hostname: string;
  /** The canonical address when the host is an IP literal. */
  literal?: string;
  port: number;
  /** Path and query sent on the request line (the fragment never leaves). */
  path: string;
}

/**
 * Parses a user-supplied URL: http(s) only (plain http only when allowed), no user info. The
 * WHATWG parser already turns `http://2130706433/` and `http://0x7f.1/` into `127.0.0.1`.
 */
export function parseOutboundUrl(raw: string, allowHttp: boolean): OutboundTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRequestError('invalid_url', 'the URL cannot be parsed');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new OutboundRequestError('scheme_not_allowed', `scheme ${url.protocol} is not allowed`);
  }
  if (url.protocol === 'http:' && !allowHttp) {
    throw new OutboundRequestError('scheme_not_allowed', 'only https URLs are allowed');
  }
  if (url.username !== '' || url.password !== '') {
    throw new OutboundRequestError('invalid_url', 'URLs with user info are not allowed');
  }
  const hostname = stripBrackets(url.hostname);
  if (hostname === '') throw new OutboundRequestError('invalid_url', 'the URL has no host');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    url,
    origin: url.origin,
    hostname,
    literal: canonicalAddress(hostname),
    port,
    path: `${url.pathname}${url.search}`,
  };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
