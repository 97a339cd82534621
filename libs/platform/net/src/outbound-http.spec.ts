import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundError } from './outbound-error';
import { OutboundHttp } from './outbound-http';

/**
 * Two servers on the same port: 127.0.0.2 stands for a public host (the policy allows exactly that
 * address), 127.0.0.1 for the internal service an attacker wants to reach. The loopback one counts
 * every TCP connection, so "refused" means no socket was ever opened to it.
 */
interface Site {
  server: Server;
  connections: number;
  requests: { url: string; headers: IncomingHttpHeaders }[];
}

function site(handler: (url: string, res: import('node:http').ServerResponse) => void): Site {
  const s: Site = { server: createServer(), connections: 0, requests: [] };
  s.server.on('connection', () => s.connections++);
  s.server.on('request', (req, res) => {
    s.requests.push({ url: req.url ?? '/', headers: req.headers });
    handler(req.url ?? '/', res);
  });
  return s;
}

const listen = (s: Site, host: string, port = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    s.server.once('error', reject);
    s.server.listen(port, host, () => resolve((s.server.address() as AddressInfo).port));
  });

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof OutboundError ? e.code : `not an OutboundError: ${String(e)}`),
  );

describe('OutboundHttp', () => {
  let port: number;
  let otherPort: number;
  let internal: Site;
  let publicSite: Site;
  let otherPublic: Site;
  const clients: OutboundHttp[] = [];
  const client = (...args: ConstructorParameters<typeof OutboundHttp>): OutboundHttp => {
    const c = new OutboundHttp(...args);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    publicSite = site((url, res) => {
      if (url === '/to-internal') res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
      else if (url === '/to-internal-by-name') res.writeHead(307, { location: `http://localhost:${port}/secret` }).end();
      else if (url === '/to-other') res.writeHead(302, { location: `http://127.0.0.2:${otherPort}/landing` }).end();
      else if (url === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      else if (url === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(64 * 1024));
      else if (url === '/big-declared') res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).end();
      else if (url === '/silent')
        return; // never answers
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('public page');
    });
    port = await listen(publicSite, '127.0.0.2');
    internal = site((_url, res) => res.writeHead(200).end('internal secret'));
    await listen(internal, '127.0.0.1', port);
    otherPublic = site((_url, res) => res.writeHead(200).end('landed'));
    otherPort = await listen(otherPublic, '127.0.0.2');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const s of [publicSite, internal, otherPublic]) {
      s.server.closeAllConnections();
      await new Promise((resolve) => s.server.close(resolve));
    }
  });

  beforeEach(() => {
    internal.connections = 0;
    internal.requests = [];
  });

  const policy = { allowCidrs: ['127.0.0.2/32'] };

  it('resolves once per connection: a rebinding answer on the second lookup never reaches loopback', async () => {
    const answers = ['127.0.0.2', '127.0.0.1'];
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      const address = answers[Math.min(asked.length - 1, answers.length - 1)] as string;
      return [{ address, family: 4 }];
    };
    const http = client({ policy, resolve });
    const first = await http.fetch(`http://rebind.test:${port}/page`, { headers: { connection: 'close' } });
    expect(await first.text()).toBe('public page');
    expect(asked).toEqual(['rebind.test']);
    // The next connection resolves again and gets the loopback answer: refused in the connector.
    await expect(codeOf(http.fetch(`http://rebind.test:${port}/page`))).resolves.toBe('FORBIDDEN_ADDRESS');
    expect(asked).toEqual(['rebind.test', 'rebind.test']);
    expect(internal.connections).toBe(0);
  });

  it('hands the socket only the allowed addresses of a mixed answer', async () => {
    const http = client({
      policy,
      resolve: async () => [
        { address: '127.0.0.1', family: 4 },
        { address: '127.0.0.2', family: 4 },
      ],
    });
    expect(await (await http.fetch(`http://mixed.test:${port}/page`)).text()).toBe('public page');
    expect(internal.connections).toBe(0);
  });

  it.each([
    'http://127.0.0.1:PORT/',
    'http://127.1:PORT/',
    'http://0x7f.1:PORT/',
    'http://2130706433:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://localhost:PORT/',
    'http://api.localhost:PORT/',
    'http://0.0.0.0:PORT/',
    'http://[::1]:PORT/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'file:///etc/passwd',
    'ftp://127.0.0.2/',
    'gopher://127.0.0.2/',
    'http://user:pw@127.0.0.2:PORT/',
    'not a url',
  ])('refuses %s without connecting', async (url) => {
    const resolve = jest.fn(async () => [{ address: '127.0.0.1', family: 4 }]);
    const http = client({ policy, resolve });
    await expect(codeOf(http.fetch(url.replace('PORT', String(port))))).resolves.toBe('FORBIDDEN_ADDRESS');
    expect(resolve).not.toHaveBeenCalled();
    expect(internal.connections).toBe(0);
  });

  it('refuses a name that resolves to loopback', async () => {
    const http = client({ policy, resolve: async () => [{ address: '::ffff:127.0.0.1', family: 6 }] });
    await expect(codeOf(http.fetch(`http://internal.test:${port}/`))).resolves.toBe('FORBIDDEN_ADDRESS');
    expect(internal.connections).toBe(0);
  });

  it('checks every redirect hop the same way', async () => {
    const http = client({ policy });
    for (const path of ['/to-internal', '/to-internal-by-name', '/to-file']) {
      await expect(codeOf(http.fetch(`http://127.0.0.2:${port}${path}`, { redirect: 'follow' }))).resolves.toBe('FORBIDDEN_ADDRESS');
    }
    expect(internal.connections).toBe(0);
    // Not following: the 3xx comes back as it is.
    expect((await http.fetch(`http://127.0.0.2:${port}/to-internal`)).status).toBe(302);
  });

  it('leaves credentials behind when a redirect changes origin', async () => {
    const http = client({ policy });
    otherPublic.requests = [];
    const res = await http.fetch(`http://127.0.0.2:${port}/to-other`, {
      redirect: 'follow',
      headers: { authorization: 'Bearer secret', cookie: 'session=1', 'x-api-key': 'k', 'user-agent': 'kb-test' },
    });
    expect(await res.text()).toBe('landed');
    expect(res.url).toBe(`http://127.0.0.2:${otherPort}/landing`);
    const seen = otherPublic.requests[0]?.headers ?? {};
    expect(seen['authorization']).toBeUndefined();
    expect(seen['cookie']).toBeUndefined();
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen['user-agent']).toBe('kb-test');
  });

  it('limits the body, declared or streamed, and the time', async () => {
    const http = client({ policy });
    await expect(codeOf(http.fetch(`http://127.0.0.2:${port}/big-declared`, { maxBytes: 1024 }))).resolves.toBe('TOO_LARGE');
    const res = await http.fetch(`http://127.0.0.2:${port}/big`, { maxBytes: 1024 });
    await expect(codeOf(res.text())).resolves.toBe('TOO_LARGE');
    await expect(codeOf(http.fetch(`http://127.0.0.2:${port}/silent`, { timeoutMs: 300 }))).resolves.toBe('TIMEOUT');
  });

  it("rejects with the caller's own abort reason", async () => {
    const http = client({ policy });
    const controller = new AbortController();
    const pending = http.fetch(`http://127.0.0.2:${port}/silent`, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
  });
});
