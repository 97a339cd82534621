import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROXY_ERROR_HEADER, RoundRobinProxy } from './round-robin-proxy';

/** An upstream that answers its name, keeps connections a minute and says so, as the gateway does. */
async function upstream(name: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(JSON.stringify({ name, method: req.method })));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const closeServer = (s: Server) =>
  new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });

describe('RoundRobinProxy (the load balancer of the rolling-restart test)', () => {
  const servers: Server[] = [];
  let proxy: RoundRobinProxy | undefined;

  afterEach(async () => {
    await proxy?.close();
    await Promise.all(servers.splice(0).map(closeServer));
  });

  it("keeps hop-by-hop headers on their hop: the client learns the proxy's keep-alive, not the gateway's", async () => {
    const a = await upstream('a');
    servers.push(a.server);
    proxy = new RoundRobinProxy([a.url]);
    const base = await proxy.listen();
    const direct = await fetch(a.url);
    await direct.text();
    expect(direct.headers.get('keep-alive')).toBe('timeout=65');
    const res = await fetch(`${base}/x`);
    expect(await res.json()).toEqual({ name: 'a', method: 'GET' });
    // Node's server default (5 s): the proxy closes idle client connections after that, so it must say so.
    expect(res.headers.get('keep-alive')).toBe('timeout=5');
  });

  it('takes turns, sends any request a gateway refused to the next one, and answers 502 itself for a POST whose connection broke', async () => {
    const a = await upstream('a');
    const b = await upstream('b');
    servers.push(a.server, b.server);
    proxy = new RoundRobinProxy([a.url, b.url]);
    const base = await proxy.listen();
    const names = [];
    for (let i = 0; i < 4; i++) names.push(((await (await fetch(`${base}/`)).json()) as { name: string }).name);
    expect(names).toEqual(['a', 'b', 'a', 'b']);

    // b closes its listener: a POST to it is refused at connect, never reached it, and goes to a.
    await closeServer(b.server);
    const posts = [];
    for (let i = 0; i < 2; i++) posts.push(await (await fetch(`${base}/`, { method: 'POST', body: '{}' })).json());
    expect(posts).toEqual([
      { name: 'a', method: 'POST' },
      { name: 'a', method: 'POST' },
    ]);
    expect(proxy.retried['ECONNREFUSED']).toBeGreaterThanOrEqual(1);

    // A gateway that takes the request and drops the connection: the POST's outcome is unknown.
    const dropper = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    servers.push(dropper);
    await proxy.close();
    proxy = new RoundRobinProxy([`http://127.0.0.1:${(dropper.address() as AddressInfo).port}`]);
    const lone = await proxy.listen();
    const res = await fetch(`${lone}/`, { method: 'POST', body: '{}' });
    expect([res.status, res.headers.get(PROXY_ERROR_HEADER)]).toEqual([502, 'ECONNRESET']);
    expect(proxy.failures.map((f) => [f.method, f.code])).toEqual([['POST', 'ECONNRESET']]);
  });
});
