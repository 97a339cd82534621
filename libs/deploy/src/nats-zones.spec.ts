import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { find, render, type K8sObject } from './manifests';

/**
 * The zone ↔ global split on the bus, with the NATS configuration the overlays render: a global
 * server and a zone server (one of each, on loopback) run the rendered `main.conf` and
 * `nats-server.conf`, with only the addresses changed. A zone's gateway reaches the global accounts
 * service and hears its events; the zone's own subjects never reach the global side.
 */
const BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';
const sc = StringCodec();
const PASSWORDS = {
  GATEWAY_NATS_PASSWORD: 'pgw1',
  ACCOUNTS_NATS_PASSWORD: 'pac1',
  CONTENT_NATS_PASSWORD: 'pct1',
  UNDERSTANDING_NATS_PASSWORD: 'pun1',
  REPORTING_NATS_PASSWORD: 'prp1',
};

function natsConfig(objects: K8sObject[]): Record<string, string> {
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('nats-config'));
  if (!cm || !find(objects, 'StatefulSet', 'nats')) throw new Error('no NATS in the overlay');
  return cm['data'];
}

/** The rendered files on loopback: one server, its own ports and store; nothing else changed. */
function onLoopback(files: Record<string, string>, ports: { client: number; leaf: number }, store: string): Record<string, string> {
  const main = (files['main.conf'] as string)
    .replace(/\ncluster \{[\s\S]*?\n\}/, '\n')
    .replace(/http_port: \d+/, '')
    .replace('store_dir: "/data"', `store_dir: ${JSON.stringify(store)}`)
    .replace(/port: 7422/, `listen: "127.0.0.1:${ports.leaf}"`);
  const users = (files['nats-server.conf'] as string)
    .replace('listen: "0.0.0.0:4222"', `listen: "127.0.0.1:${ports.client}"`)
    .replace('store_dir: "/data"', `store_dir: ${JSON.stringify(store)}`);
  return { 'main.conf': main, 'nats-server.conf': users };
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });

async function until<T>(what: string, attempt: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await attempt();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what}: ${(last as Error)?.message}`);
}

describe('NATS: a zone joined to the global cluster as a leaf node', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const conns: NatsConnection[] = [];
  let globalPort = 0;
  let zonePort = 0;

  const start = async (files: Record<string, string>, env: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-nats-zone-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const output: string[] = [];
    const child = spawn(BIN, ['-c', join(dir, 'main.conf')], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c: Buffer) => output.push(c.toString()));
    child.stderr?.on('data', (c: Buffer) => output.push(c.toString()));
    children.push(child);
    return output;
  };
  const client = async (port: number, user: string, pass: string) => {
    const nc = await until(`connect as ${user}`, () =>
      connect({ servers: `127.0.0.1:${port}`, user, pass, inboxPrefix: `_INBOX.${user}`, reconnect: false }),
    );
    conns.push(nc);
    return nc;
  };

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error(`nats-server not found at ${BIN} (NATS_SERVER_BIN)`);
    const [gClient, gLeaf, zClient] = [await freePort(), await freePort(), await freePort()];
    globalPort = gClient;
    zonePort = zClient;
    const leafPassword = 'pleaf1';
    const global = onLoopback(natsConfig(render('global')), { client: gClient, leaf: gLeaf }, join(tmpdir(), `kb-js-g-${gClient}`));
    const zone = onLoopback(natsConfig(render('europe-1')), { client: zClient, leaf: 0 }, join(tmpdir(), `kb-js-z-${zClient}`));
    dirs.push(join(tmpdir(), `kb-js-g-${gClient}`), join(tmpdir(), `kb-js-z-${zClient}`));
    await start(global, { ...PASSWORDS, POD_NAME: 'nats-global', JS_DOMAIN: 'global', LEAFNODE_PASSWORD: leafPassword });
    await start(zone, {
      ...PASSWORDS,
      POD_NAME: 'nats-zone',
      JS_DOMAIN: 'europe-1',
      LEAFNODE_URL: `nats-leaf://zone:${leafPassword}@127.0.0.1:${gLeaf}`,
    });
  }, 30_000);

  afterAll(async () => {
    for (const nc of conns) await nc.close().catch(() => undefined);
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("a zone's gateway asks the global accounts service, hears its events, and the zone's subjects stay in the zone", async () => {
    const accounts = await client(globalPort, 'accounts', PASSWORDS.ACCOUNTS_NATS_PASSWORD);
    const globalGateway = await client(globalPort, 'gateway', PASSWORDS.GATEWAY_NATS_PASSWORD);
    const zoneGateway = await client(zonePort, 'gateway', PASSWORDS.GATEWAY_NATS_PASSWORD);
    const zoneContent = await client(zonePort, 'content', PASSWORDS.CONTENT_NATS_PASSWORD);

    // The zone's content service answers its requests (before anything crosses the link, so its
    // interest would have reached the global side by the time the gateway's replies do).
    zoneContent.subscribe('content.resource.get', { queue: 'content', callback: (_e, m) => m.respond(sc.encode('zone content')) });
    await zoneContent.flush();
    accounts.subscribe('accounts.access.check', {
      queue: 'accounts',
      callback: (_e, m) => m.respond(sc.encode(`granted:${sc.decode(m.data)}`)),
    });
    await accounts.flush();

    // Credentials issued globally are checked by the global accounts service, from the zone.
    const reply = await until('zone → global accounts request', () =>
      zoneGateway.request('accounts.access.check', sc.encode('token-1'), { timeout: 1000, noMux: true }),
    );
    expect(sc.decode(reply.data)).toBe('granted:token-1');
    // The zone's own requests are answered in the zone.
    expect(sc.decode((await zoneGateway.request('content.resource.get', sc.encode('{}'), { timeout: 2000, noMux: true })).data)).toBe(
      'zone content',
    );

    // The accounts service's events reach the zone's own NOTIFICATIONS stream (the apps consume
    // events through JetStream, never by plain subscription): the stream captures the subject as
    // messages cross the link.
    const jsm = await zoneContent.jetstreamManager();
    await jsm.streams.add({ name: 'NOTIFICATIONS', subjects: ['accounts.credential.revoked'] });
    await until('global → zone event', async () => {
      accounts.publish('accounts.credential.revoked', sc.encode('key-9'));
      await accounts.flush();
      const info = await jsm.streams.info('NOTIFICATIONS');
      if (info.state.messages < 1) throw new Error('not captured yet');
    });

    // A zone's content is not reachable from the global side: no responders there.
    await expect(
      globalGateway.request('content.resource.get', sc.encode('{}'), { timeout: 1000, noMux: true }).then((m) => sc.decode(m.data)),
    ).rejects.toThrow(/503|no responders|TIMEOUT/i);
  }, 60_000);
});
