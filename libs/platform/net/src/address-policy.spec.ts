import { AddressPolicy, canonicalAddress, isForbiddenAddress, parseCidr } from './address-policy';

/** The host the WHATWG URL parser hands the client for what a user typed. */
const hostOf = (url: string): string => new URL(url).hostname;

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.5',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.1.1',
    '100.64.0.1',
    '100.127.255.255',
    '100.100.100.200',
    '0.0.0.0',
    '0.1.2.3',
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '[::1]',
    'fc00::1',
    'fd00::1',
    'fd12:3456::1',
    'fd00:ec2::254',
    'fe80::1',
    'fe80::1%eth0',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '2001::1',
    '100::1',
    '::ffff:127.0.0.1',
    '[::ffff:127.0.0.1]',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '64:ff9b::127.0.0.1',
    '2002:c0a8:101::1',
    '2002:7f00:1::',
    '::127.0.0.1',
    'not-an-ip',
    '',
    '127.1',
    '0x7f.1',
    '2130706433',
  ])('refuses %s', (ip) => expect(isForbiddenAddress(ip)).toBe(true));

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows %s', (ip) => expect(isForbiddenAddress(ip)).toBe(false));

  it.each([
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '127.0.0.1'],
    ['http://[::1]/', '0:0:0:0:0:0:0:1'],
    ['http://0/', '0.0.0.0'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '169.254.169.254'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2:0:0:0:0:0:254'],
  ])('reads the numeric forms of %s as %s, which are refused', (url, canonical) => {
    expect(canonicalAddress(hostOf(url))?.address).toBe(canonical);
    expect(isForbiddenAddress(hostOf(url))).toBe(true);
  });
});

describe('AddressPolicy', () => {
  const strict = new AddressPolicy();

  it('refuses loopback names and literals before any lookup', () => {
    for (const host of ['localhost', 'LOCALHOST', 'api.localhost', 'localhost.', '127.0.0.1', '[::1]', '169.254.169.254'])
      expect(strict.refuseHost(host)).toBeDefined();
    expect(strict.refuseHost('example.com')).toBeUndefined();
    expect(strict.refuseHost('93.184.216.34')).toBeUndefined();
  });

  it('lets an allow-listed CIDR through, and nothing next to it', () => {
    const policy = new AddressPolicy({ allowCidrs: ['10.20.0.0/16', '127.0.0.1', '::ffff:192.168.7.0/120'] });
    expect(policy.refuseAddress('llm.internal', '10.20.3.4')).toBeUndefined();
    expect(policy.refuseAddress('llm.internal', '::ffff:10.20.3.4')).toBeUndefined();
    expect(policy.refuseAddress('x', '127.0.0.1')).toBeUndefined();
    expect(policy.refuseAddress('x', '192.168.7.9')).toBeUndefined();
    expect(policy.refuseAddress('x', '10.21.0.1')).toBeDefined();
    expect(policy.refuseAddress('x', '127.0.0.2')).toBeDefined();
    expect(policy.refuseAddress('x', '169.254.169.254')).toBeDefined();
  });

  it('lets an allow-listed host name through to private addresses but never to metadata', () => {
    const policy = new AddressPolicy({ allowHosts: ['LLM.corp.example'] });
    expect(policy.refuseAddress('llm.corp.example', '10.0.0.7')).toBeUndefined();
    expect(policy.refuseAddress('llm.corp.example.', '10.0.0.7')).toBeUndefined();
    expect(policy.refuseAddress('other.corp.example', '10.0.0.7')).toBeDefined();
    expect(policy.refuseAddress('llm.corp.example', '169.254.169.254')).toBeDefined();
    expect(policy.refuseAddress('llm.corp.example', 'fd00:ec2::254')).toBeDefined();
  });

  it('opens every private range with the blanket switch, metadata excepted unless a CIDR names it', () => {
    const open = new AddressPolicy({ allowPrivate: true });
    expect(open.refuseHost('localhost')).toBeUndefined();
    expect(open.refuseAddress('x', '127.0.0.1')).toBeUndefined();
    expect(open.refuseAddress('x', '::ffff:169.254.169.254')).toBeDefined();
    expect(new AddressPolicy({ allowCidrs: ['169.254.169.254/32'] }).refuseAddress('x', '169.254.169.254')).toBeUndefined();
  });

  it('reads CIDR entries strictly', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 4 });
    expect(parseCidr('fd00::/8')).toMatchObject({ prefix: 8, family: 6 });
    expect(parseCidr('127.0.0.1')).toEqual({ address: '127.0.0.1', prefix: 32, family: 4 });
    for (const bad of ['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0.0/8/1', '10.0.0.0/x', ''])
      expect(parseCidr(bad)).toBeUndefined();
    expect(() => new AddressPolicy({ allowCidrs: ['nope'] })).toThrow(/nope/);
  });
});
