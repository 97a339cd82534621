import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpClient, apiKey } from './support/http-client';
import { ServiceProcess, distMain, freePort } from './support/processes';
import type { BootstrapFile } from './support/topologies';

/**
 * A POST whose headers the server has read (it answered `100 Continue`) and whose body is sent only
 * on `finish()`: a request that is in flight, for as long as the test wants.
 */
function heldPost(port: number, path: string, headers: Record<string, string>, body: string) {
  const req = request({
    host: '127.0.0.1',
    port,
    path,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' },
  });
  const continued = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.once('error', reject);
  });
  req.flushHeaders();
  return { continued, response, finish: () => req.end(body) };
}

describe('graceful shutdown — standalone (SIGTERM)', () => {
  let site: Server;
  let siteUrl: string;
  /** /slow-page: the first request is held (never answered), later ones are answered. */
  let slowHits = 0;
  const held: ServerResponse[] = [];
  let firstSlowHit!: () => void;
  const slowPageFetched = new Promise<void>((resolve) => (firstSlowHit = resolve));
  let dataDir: string;
  let port: number;
  let proc: ServiceProcess | undefined;
  let http: HttpClient;

  const launch = async () => {
    // The ack wait is far beyond the test: a job comes back quickly only if the shutdown hands it back.
    proc = new ServiceProcess(
      'standalone',
      distMain('standalone'),
      {
        PORT: String(port),
        DATA_DIR: dataDir,
        PROCESSING_ALLOW_PRIVATE_NETWORKS: 'true',
        PROCESSING_ACK_WAIT_MS: '600000',
        SHUTDOWN_GRACE_MS: '8000',
      },
      dataDir,
    );
    proc.start();
    await proc.waitReady(`http://127.0.0.1:${port}/health/ready`);
  };

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.url === '/slow-page') {
        slowHits += 1;
        if (slowHits === 1) {
          held.push(res);
          return firstSlowHit();
        }
        return res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            '<html lang="en"><head><title>Breakwaters</title></head><body><article><p>A breakwater shelters the harbour from storm waves.</p></article></body></html>',
          );
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'kb-e2e-shutdown-'));
    port = await freePort();
    http = new HttpClient(`http://127.0.0.1:${port}`);
    await launch();
  }, 120_000);

  afterAll(async () => {
    await proc?.stop('SIGTERM');
    for (const res of held) res.destroy();
    await new Promise<void>((resolve) => site.close(() => resolve()));
    if (!process.env['KB_E2E_KEEP']) rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the request in flight, hands back the job in flight, exits 0; after a restart both are done', async () => {
    const boot = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapFile;
    const kbid = boot.kb.id;
    const key = apiKey(boot.api_key.token);
    const status = (rid: string, want: string) =>
      http.eventually(
        async () => {
          const res = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kbid}/resource/${rid}`, { credential: key });
          return res.status === 200 && res.body.metadata.status === want ? res.body : undefined;
        },
        60_000,
        `resource ${rid} to be ${want}`,
      );

    // A processing job in flight: its link's page does not answer.
    const linked = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'Held link', links: { page: { uri: `${siteUrl}/slow-page` } } },
    });
    expect(linked.status).toBe(201);
    await slowPageFetched;

    // A request in flight: the server has its headers, not yet its body.
    const inFlight = heldPost(
      port,
      `/api/v1/kb/${kbid}/resources`,
      { [key.header]: key.value },
      JSON.stringify({ title: 'Sent during shutdown', texts: { body: { body: 'The tide turns at six.' } } }),
    );
    await inFlight.continued;

    proc!.signal('SIGTERM');
    // New connections are refused at once...
    await http.eventually(
      async () =>
        await fetch(`http://127.0.0.1:${port}/health/ready`).then(
          () => undefined,
          () => true,
        ),
      10_000,
      'the server to stop accepting',
    );
    // ...while the request in flight is still served.
    inFlight.finish();
    const created = await inFlight.response;
    expect(created.status).toBe(201);
    const rid = (JSON.parse(created.body) as { uuid: string }).uuid;

    expect(await proc!.waitExit()).toBe(0);
    expect(proc!.output.join('')).toMatch(/handed back/);
    expect(slowHits).toBe(1);

    // The restarted process has the resource, and takes the handed-back job at once (its lease would last 10 minutes).
    await launch();
    await status(rid, 'PROCESSED');
    await status(linked.body.uuid, 'PROCESSED');
    expect(slowHits).toBe(2);
  }, 180_000);
});
