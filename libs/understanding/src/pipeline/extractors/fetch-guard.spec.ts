import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExtractionError } from './extraction.error';
import { assertFetchable, isForbiddenAddress, type LookupFn } from './fetch-guard';
import { fetchPage } from './fetch-page';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(() => undefined, (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`));

/** A resolver with fixed answers, so no test touches real DNS. */
const fakeLookup: LookupFn = async (host) => {
  const table: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'sneaky.example': ['93.184.216.34', '10.1.2.3'],
    'metadata.example': ['169.254.169.254'],
    'v6.example': ['2606:4700:4700::1111'],
    'mapped.example': ['::ffff:192.168.0.1'],
  };
  const found = table[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1', '127.1.2.3', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255',
    '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1', '2002:c0a8:101::1', 'not-an-ip',
  ])('refuses %s', (ip) => expect(isForbiddenAddress(ip)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) =>
    expect(isForbiddenAddress(ip)).toBe(false));
});

describe('assertFetchable', () => {
  it.each([
    'http://127.0.0.1/', 'http://localhost:8080/', 'http://api.localhost/', 'http://[::1]/', 'http://10.0.0.5/', 'http://169.254.169.254/latest/meta-data/',
    'http://0x7f000001/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/', 'http://sneaky.example/',
    'http://metadata.example/', 'http://mapped.example/', 'ftp://public.example/', 'file:///etc/passwd', 'gopher://public.example/', 'http://user:pw@public.example/',
    'not a url',
  ])('refuses %s', async (url) => {
    await expect(codeOf(assertFetchable(url, { allowPrivate: false, lookup: fakeLookup }))).resolves.toBe('FORBIDDEN_ADDRESS');
  });

  it('allows public hosts, and private ones only when allowed', async () => {
    await expect(assertFetchable('https://public.example/a', { allowPrivate: false, lookup: fakeLookup })).resolves.toMatchObject({ addresses: ['93.184.216.34'] });
    await expect(assertFetchable('http://v6.example/', { allowPrivate: false, lookup: fakeLookup })).resolves.toBeDefined();
    await expect(assertFetchable('http://127.0.0.1:3000/', { allowPrivate: true })).resolves.toBeDefined();
    await expect(codeOf(assertFetchable('file:///etc/passwd', { allowPrivate: true }))).resolves.toBe('FORBIDDEN_ADDRESS');
    await expect(codeOf(assertFetchable('http://nowhere.example/', { allowPrivate: false, lookup: fakeLookup }))).resolves.toBe('FETCH_FAILED');
  });
});

describe('fetchPage', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
        res.end(Buffer.from('<html><body><p>caf\xe9 ' + (req.headers.cookie ?? '') + '</p></body></html>', 'latin1'));
      } else if (url === '/doc.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end('%PDF-1.4 fake');
      } else if (url === '/to-local') {
        res.writeHead(302, { location: `${base}/secret` });
        res.end();
      } else if (url.startsWith('/loop')) {
        res.writeHead(301, { location: `/loop${Number(url.slice(5) || 0) + 1}` });
        res.end();
      } else if (url === '/redirect-to-page') {
        res.writeHead(302, { location: '/page' });
        res.end();
      } else if (url === '/huge-chunked') {
        res.writeHead(200, { 'content-type': 'text/html' });
        let sent = 0;
        const push = (): void => {
          if (sent >= 64) return void res.end();
          sent++;
          res.write(Buffer.alloc(1024, 'a'), push);
        };
        push();
      } else if (url === '/huge-declared') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(10_000_000) });
        res.write('<html>');
        setTimeout(() => res.destroy(), 50);
      } else {
        res.writeHead(404);
        res.end('missing');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('returns decoded HTML after following a redirect, sending cookies', async () => {
    const page = await fetchPage(`${base}/redirect-to-page`, { allowPrivate: true, cookies: { session: 'abc' } });
    expect(page).toMatchObject({ kind: 'html', finalUrl: `${base}/page` });
    expect(page.kind === 'html' && page.html).toContain('café session=abc');
  });

  it('returns bytes and content type for non-HTML responses', async () => {
    const page = await fetchPage(`${base}/doc.pdf`, { allowPrivate: true });
    expect(page.kind).toBe('file');
    expect(page.contentType).toBe('application/pdf');
    expect(page.kind === 'file' && page.data.toString()).toBe('%PDF-1.4 fake');
  });

  it('checks every redirect hop: a public host redirecting to 127.0.0.1 is refused', async () => {
    const requested: string[] = [];
    // "public.example" resolves (fake) to a public address but is served by the local test server.
    const fetchImpl: typeof fetch = (input, init) => {
      const url = String(input);
      requested.push(url);
      return fetch(url.replace('http://public.example', base), init);
    };
    const code = await codeOf(fetchPage('http://public.example/to-local', { fetchImpl, lookup: fakeLookup, allowPrivate: false }));
    expect(code).toBe('FORBIDDEN_ADDRESS');
    expect(requested).toEqual(['http://public.example/to-local']);
  });

  it('sends headers and cookies to the original origin only', async () => {
    const seen: { url: string; headers: Record<string, string> }[] = [];
    const fetchImpl: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), headers: init?.headers as Record<string, string> });
      return seen.length === 1
        ? new Response(null, { status: 302, headers: { location: 'http://v6.example/landing' } })
        : new Response('<html>ok</html>', { headers: { 'content-type': 'text/html' } });
    };
    await fetchPage('http://public.example/start', { fetchImpl, lookup: fakeLookup, headers: { authorization: 'Bearer t' }, cookies: { s: '1' } });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer t', cookie: 's=1' });
    expect(seen[1]!.headers['authorization']).toBeUndefined();
    expect(seen[1]!.headers['cookie']).toBeUndefined();
  });

  it('stops after 5 redirects, on error statuses, and when the body exceeds maxBytes', async () => {
    await expect(codeOf(fetchPage(`${base}/loop`, { allowPrivate: true }))).resolves.toBe('FETCH_FAILED');
    await expect(codeOf(fetchPage(`${base}/nope`, { allowPrivate: true }))).resolves.toBe('FETCH_FAILED');
    await expect(codeOf(fetchPage(`${base}/huge-chunked`, { allowPrivate: true, maxBytes: 16 * 1024 }))).resolves.toBe('TOO_LARGE');
    await expect(codeOf(fetchPage(`${base}/huge-declared`, { allowPrivate: true, maxBytes: 16 * 1024 }))).resolves.toBe('TOO_LARGE');
    await expect(codeOf(fetchPage(`${base}/page`, { allowPrivate: false }))).resolves.toBe('FORBIDDEN_ADDRESS');
  });
});
