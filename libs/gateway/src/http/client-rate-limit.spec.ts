import { ClientRateLimiter, clientKey } from './client-rate-limit';

describe('ClientRateLimiter', () => {
  it('allows a burst, then refuses until a token is back', () => {
    let now = 1_000_000;
    const limiter = new ClientRateLimiter({ burst: 3, perMinute: 60, maxClients: 10 }, () => now);
    expect([limiter.take('10.0.0.1'), limiter.take('10.0.0.1'), limiter.take('10.0.0.1')]).toEqual([null, null, null]);
    expect(limiter.take('10.0.0.1')).toBe(now + 1_000);
    expect(limiter.take('10.0.0.2')).toBeNull();
    now += 1_000;
    expect(limiter.take('10.0.0.1')).toBeNull();
    expect(limiter.take('10.0.0.1')).not.toBeNull();
  });

  it('remembers at most maxClients addresses, forgetting the least recently seen', () => {
    const limiter = new ClientRateLimiter({ burst: 1, perMinute: 1, maxClients: 100 }, () => 0);
    for (let i = 0; i < 10_000; i++) limiter.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(limiter.size).toBe(100);
    // The most recent one is still counted; the first was forgotten (it starts afresh).
    expect(limiter.take('10.0.39.15')).not.toBeNull();
    expect(limiter.take('10.0.0.0')).toBeNull();
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
  });
});
