import { isIPv6 } from 'node:net';

export interface ClientRateLimitOptions {
  /** Requests a client may send at once after being quiet (the bucket's size). */
  burst: number;
  /** Requests per minute a client gets back (the bucket's refill rate). */
  perMinute: number;
  /** Clients remembered at most; the least recently seen is forgotten first (bounded memory). */
  maxClients: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per client address, held in the gateway's memory. It sheds a flood before any
 * body is parsed or any service is asked, so it must cost no database work: each gateway replica
 * counts for itself. That is enough for what it is for (load); the bound on password guessing is
 * the accounts service's failure backoff, which is shared by every replica.
 *
 * The map is an LRU (a Map keeps insertion order; a hit moves the key to the end): an attacker
 * rotating addresses can only evict old entries, never grow memory past `maxClients`.
 */
export class ClientRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly options: ClientRateLimitOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token; returns null when allowed, else the epoch ms at which a token is back. */
  take(address: string): number | null {
    const key = clientKey(address);
    const now = this.now();
    const perMs = this.options.perMinute / 60_000;
    const known = this.buckets.get(key);
    const bucket = known ?? { tokens: this.options.burst, at: now };
    if (known) this.buckets.delete(key);
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.buckets.set(key, bucket);
    this.evict();
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return now + Math.ceil((1 - bucket.tokens) / perMs);
  }

  get size(): number {
    return this.buckets.size;
  }

  private evict(): void {
    while (this.buckets.size > this.options.maxClients) {
      const oldest = this.buckets.keys().next().value;
      if (oldest === undefined) return;
      this.buckets.delete(oldest);
    }
  }
}

/**
 * The unit an address is counted under: IPv4 as it is (IPv4-mapped IPv6 unwrapped), IPv6 by its
 * /64 — one subscriber usually holds a whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
