import { startFakeDnsServer, type FakeDnsServer } from '@kb/platform/testing';
import { domainHasToken, systemTxtResolver } from './domain-resolver';

describe('domain verification over DNS (a DNS server on loopback)', () => {
  let dns: FakeDnsServer;

  beforeAll(async () => {
    dns = await startFakeDnsServer();
  });
  afterAll(() => dns?.close());

  it('finds the token at _kb-challenge.<domain> or at the domain, and nothing else counts', async () => {
    const resolver = systemTxtResolver([dns.server]);
    dns.addTxt('_kb-challenge.one.test', 'kb-domain-verification=tok-1');
    dns.addTxt('two.test', 'v=spf1 -all');
    dns.addTxt('two.test', 'kb-domain-verification=tok-2');
    dns.addTxt('three.test', 'kb-domain-verification=someone-elses-token');
    await expect(domainHasToken(resolver, 'one.test', 'tok-1')).resolves.toBe(true);
    await expect(domainHasToken(resolver, 'two.test', 'tok-2')).resolves.toBe(true);
    await expect(domainHasToken(resolver, 'three.test', 'tok-3')).resolves.toBe(false);
    await expect(domainHasToken(resolver, 'nowhere.test', 'tok-1')).resolves.toBe(false);
    expect(dns.queries).toContain('_kb-challenge.nowhere.test');
  });
});
