import { BlockList, isIP } from 'node:net';

/**
 * Which destinations an outbound request may reach. By default only public unicast addresses; an
 * operator opens private ones explicitly (a self-hosted model on the office network, a test's
 * fake server on loopback).
 */
export interface OutboundPolicy {
  /** Host names (exact, case-insensitive) let through whatever they resolve to, metadata excepted. */
  allowHosts?: readonly string[];
  /** Addresses or CIDR blocks let through (`10.1.0.0/16`, `127.0.0.1`, `fd00::/8`). */
  allowCidrs?: readonly string[];
  /** Every private, loopback and link-local range (development, the e2e suite); metadata stays refused. */
  allowPrivate?: boolean;
}

const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blockedV4.addSubnet(net, prefix, 'ipv4');

const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blockedV6.addSubnet(net, prefix, 'ipv6');

/** Cloud instance metadata endpoints (AWS, GCP, Azure, OpenStack; Alibaba; AWS's IPv6 one), canonical: credentials live there. */
const METADATA = new Set(['169.254.169.254', '100.100.100.200', 'fd00:ec2:0:0:0:0:0:254']);

/**
 * The address in a canonical form: brackets and zone id dropped, IPv4 carried in IPv6
 * (IPv4-mapped, NAT64, 6to4) unwrapped, IPv6 as eight lower-case groups without zero compression. Undefined when `ip` is not
 * an IP address (the WHATWG URL parser has already turned 127.1, 0x7f.1 and 2130706433 into 127.0.0.1).
 */
export function canonicalAddress(ip: string): { address: string; family: 4 | 6 } | undefined {
  const raw = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(raw);
  if (family === 4) return { address: raw, family: 4 };
  if (family !== 6) return undefined;
  const groups = expandIpv6(raw);
  if (!groups) return undefined;
  const embedded = embeddedIpv4(groups);
  if (embedded) return { address: embedded, family: 4 };
  return { address: groups.map((g) => g.toString(16)).join(':'), family: 6 };
}

/** True for addresses a server-side request must never reach: loopback, private, link-local, CGNAT, multicast, reserved, metadata. */
export function isForbiddenAddress(ip: string): boolean {
  const c = canonicalAddress(ip);
  if (!c) return true;
  if (isMetadata(c.address)) return true;
  return c.family === 4 ? blockedV4.check(c.address, 'ipv4') : blockedV6.check(c.address, 'ipv6');
}

function isMetadata(canonical: string): boolean {
  return METADATA.has(canonical);
}

/** `localhost` and its subdomains (RFC 6761): resolvers answer them with loopback, whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** The policy, compiled: answers "may this host, at this address, be reached?". */
export class AddressPolicy {
  private readonly hosts: Set<string>;
  private readonly allowed = new BlockList();
  private readonly allowPrivate: boolean;

  constructor(policy: OutboundPolicy = {}) {
    this.hosts = new Set((policy.allowHosts ?? []).map((h) => h.toLowerCase().replace(/\.$/, '')));
    for (const cidr of policy.allowCidrs ?? []) {
      const parsed = parseCidr(cidr);
      if (!parsed) throw new Error(`not an address or CIDR block: ${cidr}`);
      this.allowed.addSubnet(parsed.address, parsed.prefix, parsed.family === 4 ? 'ipv4' : 'ipv6');
    }
    this.allowPrivate = policy.allowPrivate ?? false;
  }

  /** Why `host` may not be asked for at all (before any lookup), or undefined. */
  refuseHost(host: string): string | undefined {
    const name = host.replace(/^\[|\]$/g, '');
    if (canonicalAddress(name)) return this.refuseAddress(name, name);
    if (isLocalhostName(name) && !this.allowPrivate && !this.hosts.has(name.toLowerCase())) return `${name} is a loopback name`;
    return undefined;
  }

  /** Why `host` may not be reached at `address`, or undefined when it may. */
  refuseAddress(host: string, address: string): string | undefined {
    const c = canonicalAddress(address);
    if (!c) return `${address} is not an IP address`;
    if (this.allowed.check(c.address, c.family === 4 ? 'ipv4' : 'ipv6')) return undefined;
    // Metadata only through an explicit CIDR entry: a host name or the blanket switch never reach it.
    if (isMetadata(c.address)) return `${address} is a cloud metadata address`;
    if (
      this.hosts.has(
        host
          .replace(/^\[|\]$/g, '')
          .toLowerCase()
          .replace(/\.$/, ''),
      )
    )
      return undefined;
    if (this.allowPrivate) return undefined;
    return isForbiddenAddress(c.address) ? `${address} is not a public address` : undefined;
  }
}

/** `a.b.c.d/n`, `v6/n` or a bare address (a single host). IPv4 in IPv6 form is read as IPv4. */
export function parseCidr(text: string): { address: string; prefix: number; family: 4 | 6 } | undefined {
  const [ip = '', bits, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const c = canonicalAddress(ip);
  if (!c) return undefined;
  const written = isIP(ip.replace(/^\[|\]$/g, ''));
  const max = written === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d+$/.test(bits ?? String(max)) || prefix > max) return undefined;
  // An IPv4-mapped block (::ffff:10.0.0.0/104) names the IPv4 block under it.
  if (c.family === 4 && written === 6) return prefix < 96 ? undefined : { address: c.address, prefix: prefix - 96, family: 4 };
  return { address: c.address, prefix, family: c.family };
}

/** The IPv4 address carried by IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses. */
function embeddedIpv4(g: number[]): string | undefined {
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
