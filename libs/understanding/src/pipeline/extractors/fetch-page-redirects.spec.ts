import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundHttp } from '@kb/platform/net';
import { ExtractionError } from './extraction.error';
import { fetchPage } from './fetch-page';

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof ExtractionError ? e.code : `not an ExtractionError: ${String(e)}`),
  );

/** The test server on loopback, reachable because the policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
/** 127.0.0.2 stands for a public host; loopback (127.0.0.1) stays refused. */
const publicOnly = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.2'] } });
afterAll(async () => {
  await local.close();
  await publicOnly.close();
});

describe('fetchPage', () => {
  let server: Server;
  let base: string;
  let publicSite: Server;
  let publicBase: string;
  let landing: Server;
  const landed: IncomingHttpHeaders[] = [];
  let secretHits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
        res.end(Buffer.from('<html><body><p>caf\xe9 ' + (req.headers.cookie ?? '') + '</p></body></html>', 'latin1'));
      } else if (url === '/doc.pdf') {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end('%PDF-1.4 fake');
      } else if (url === '/secret') {
        secretHits++;
        res.writeHead(200).end('internal');
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
    landing = createServer((req, res) => {
      landed.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>');
    });
    await new Promise<void>((resolve) => landing.listen(0, '127.0.0.2', resolve));
    const landingUrl = `http://127.0.0.2:${(landing.address() as AddressInfo).port}/landing`;
    publicSite = createServer((req, res) => {
      if (req.url === '/to-local') res.writeHead(302, { location: `${base}/secret` }).end();
      else res.writeHead(302, { location: landingUrl }).end();
    });
    await new Promise<void>((resolve) => publicSite.listen(0, '127.0.0.2', resolve));
    publicBase = `http://127.0.0.2:${(publicSite.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of [server, landing, publicSite]) await new Promise<void>((resolve) => s.close(() => resolve()));
  });

  it('returns decoded HTML after following a redirect, sending cookies', async () => {
    const page = await fetchPage(`${base}/redirect-to-page`, { http: local, cookies: { session: 'abc' } });
    expect(page).toMatchObject({ kind: 'html', finalUrl: `${base}/page` });
    expect(page.kind === 'html' && page.html).toContain('café session=abc');
  });

  it('returns bytes and content type for non-HTML responses', async () => {
    const page = await fetchPage(`${base}/doc.pdf`, { http: local });
    expect(page.kind).toBe('file');
    expect(page.contentType).toBe('application/pdf');
    expect(page.kind === 'file' && page.data.toString()).toBe('%PDF-1.4 fake');
  });

  it('checks every redirect hop: a public host redirecting to 127.0.0.1 is refused', async () => {
    secretHits = 0;
    await expect(codeOf(fetchPage(`${publicBase}/to-local`, { http: publicOnly }))).resolves.toBe('FORBIDDEN_ADDRESS');
    expect(secretHits).toBe(0);
  });

  it('sends headers and cookies to the original origin only', async () => {
    landed.length = 0;
    const page = await fetchPage(`${publicBase}/start`, { http: publicOnly, headers: { authorization: 'Bearer t' }, cookies: { s: '1' } });
    expect(page.kind).toBe('html');
    expect(landed[0]?.['authorization']).toBeUndefined();
    expect(landed[0]?.['cookie']).toBeUndefined();
    expect(landed[0]?.['user-agent']).toBe('KnowledgeBoxBot/1.0');
  });

  it('stops after 5 redirects, on error statuses, and when the body exceeds maxBytes', async () => {
    await expect(codeOf(fetchPage(`${base}/loop`, { http: local }))).resolves.toBe('FETCH_FAILED');
    await expect(codeOf(fetchPage(`${base}/nope`, { http: local }))).resolves.toBe('FETCH_FAILED');
    await expect(codeOf(fetchPage(`${base}/huge-chunked`, { http: local, maxBytes: 16 * 1024 }))).resolves.toBe('TOO_LARGE');
    await expect(codeOf(fetchPage(`${base}/huge-declared`, { http: local, maxBytes: 16 * 1024 }))).resolves.toBe('TOO_LARGE');
    await expect(codeOf(fetchPage(`${base}/page`, { http: publicOnly }))).resolves.toBe('FORBIDDEN_ADDRESS');
  });
});
