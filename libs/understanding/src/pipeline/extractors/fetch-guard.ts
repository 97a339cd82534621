import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ExtractionError } from './extraction.error';

/** Resolves a host name to every address it has (as `dns.lookup(host, { all: true })`). */
export type LookupFn = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface FetchGuardOptions {
  /** Lets private and loopback addresses through (local development, tests); schemes are still checked. */
  allowPrivate: boolean;
  lookup?: LookupFn;
}

const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blockedV4.addSubnet(net, prefix, 'ipv4');

const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blockedV6.addSubnet(net, prefix, 'ipv6');

/** True for addresses a server-side fetch must never reach: loopback, private, link-local, CGNAT, multicast, reserved. */
export function isForbiddenAddress(ip: string): boolean {
  const address = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 4) return blockedV4.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(address);
  if (embedded) return blockedV4.check(embedded, 'ipv4');
  return blockedV6.check(address, 'ipv6');
}

/** The IPv4 address carried by IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses. */
function embeddedIpv4(ipv6: string): string | undefined {
  const g = expandIpv6(ipv6);
  if (!g) return undefined;
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x2002) return v4(g[1] ?? 0, g[2] ?? 0);
  return undefined;
}

function expandIpv6(ip: string): number[] | undefined {
  let s = ip.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[1].split('.').map(Number);
    s = s.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const part = (x: string): number[] => (x ? x.split(':').map((h) => parseInt(h, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff) ? groups : undefined;
}

const defaultLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Refuses URLs a server must not fetch on a user's behalf (SSRF): schemes other than http(s), and
 * hosts that are or resolve to a forbidden address — every address is checked, since a client may
 * connect to any of them. The WHATWG parser has already normalised numeric hosts (0x7f000001,
 * 2130706433, 0177.1 → 127.0.0.1). Returns the parsed URL and the addresses it resolved to.
 */
export async function assertFetchable(url: string, options: FetchGuardOptions): Promise<{ url: URL; addresses: string[] }> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ExtractionError(`Not a valid URL: ${url}`, 'FORBIDDEN_ADDRESS');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ExtractionError(`Only http and https URLs can be fetched, not ${parsed.protocol}`, 'FORBIDDEN_ADDRESS');
  }
  if (parsed.username || parsed.password) {
    throw new ExtractionError('URLs with embedded credentials are not fetched; use headers', 'FORBIDDEN_ADDRESS');
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (options.allowPrivate) return { url: parsed, addresses: [] };
  if (host === 'localhost' || host.endsWith('.localhost')) throw forbidden(url, host);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await (options.lookup ?? defaultLookup)(host)).map((a) => a.address);
    } catch (err) {
      throw new ExtractionError(`Cannot resolve ${host}: ${(err as Error).message}`, 'FETCH_FAILED');
    }
    if (!addresses.length) throw new ExtractionError(`Cannot resolve ${host}`, 'FETCH_FAILED');
  }
  const bad = addresses.find(isForbiddenAddress);
  if (bad) throw forbidden(url, bad);
  return { url: parsed, addresses };
}

function forbidden(url: string, address: string): ExtractionError {
  return new ExtractionError(`Refusing to fetch ${url}: ${address} is not a public address`, 'FORBIDDEN_ADDRESS');
}
