import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKbClient } from './kb-client';

/** A local server that records what the client sends and answers a fixed JSON body. */
describe('createKbClient', () => {
  let server: Server;
  let baseUrl: string;
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ uuid: 'kb-1', slug: 'one' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  it('sends an API key in X-SVC-SERVICEACCOUNT and fills the path parameters', async () => {
    const { data, response } = await createKbClient({ baseUrl, apiKey: 'key-1' }).GET('/api/v1/kb/{kbid}', {
      params: { path: { kbid: 'kb 1' } },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({ uuid: 'kb-1', slug: 'one' });
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/v1/kb/kb%201' });
    expect(seen[0]?.headers['x-svc-serviceaccount']).toBe('Bearer key-1');
    expect(seen[0]?.headers['authorization']).toBeUndefined();
  });

  it('sends a user token as a bearer token, and nothing without a credential', async () => {
    await createKbClient({ baseUrl, token: 'tok-1' }).GET('/api/v1/user');
    await createKbClient({ baseUrl }).GET('/api/v1/user');
    expect(seen.map((s) => [s.headers['authorization'], s.headers['x-svc-serviceaccount']])).toEqual([
      ['Bearer tok-1', undefined],
      [undefined, undefined],
    ]);
  });

  it('refuses two credentials (the service would)', () => {
    expect(() => createKbClient({ baseUrl, apiKey: 'a', token: 'b' } as never)).toThrow(/one credential/);
  });
});
