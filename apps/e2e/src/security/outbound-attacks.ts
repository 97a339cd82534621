import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { bearer, type Credential } from '../support/http-client';
import type { Topology } from '../support/topologies';

/** Starts the topology under test with these variables for every process. */
export type StartWith = (env: Record<string, string>) => Promise<Topology>;

/**
 * Server-side requests forgery, as a tenant would try it: every address the service calls on a
 * tenant's behalf (a link field, a redirect, a generative or embedding provider in `user_keys`, a
 * webhook) named as an internal service on loopback. The deployment runs WITHOUT
 * PROCESSING_ALLOW_PRIVATE_NETWORKS; the operator allows one address, 127.0.0.2, as a stand-in for
 * a permitted host (OUTBOUND_ALLOW_CIDRS). The internal service (127.0.0.1) counts every TCP
 * connection: a refusal means it never saw one.
 */
export function describeOutboundAttacks(start: StartWith, options: { restartWithAllowList: boolean }): void {
  let topology: Topology | undefined;
  let pat: Credential;
  let accountId: string;
  /** The internal service an attacker aims at. */
  let internal: Server;
  let internalPort: number;
  let internalConnections = 0;
  /** A host the operator allowed: redirects to the internal service, fails as a provider with internal data in its body. */
  let allowed: Server;
  let allowedUrl: string;
  /** A real generative provider protocol on loopback (127.0.0.1). */
  let llm: FakeLlmServer;
  const SECRET = 'INTERNAL-SECRET db_password=hunter2';

  const listen = (server: Server, host: string): Promise<number> =>
    new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));

  beforeAll(async () => {
    internal = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>${SECRET}</p></body></html>`),
    );
    internal.on('connection', () => internalConnections++);
    internalPort = await listen(internal, '127.0.0.1');
    allowed = createServer((req, res) => {
      if (req.url === '/to-internal') return void res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/secret` }).end();
      // Any provider call: an error whose body carries what an internal service would hold.
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: SECRET } }));
    });
    allowedUrl = `http://127.0.0.2:${await listen(allowed, '127.0.0.2')}`;
    llm = await startFakeLlmServer();
    topology = await start({ PROCESSING_ALLOW_PRIVATE_NETWORKS: 'false', OUTBOUND_ALLOW_CIDRS: '127.0.0.2/32' });
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    accountId = boot.account.id;
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
    for (const s of [internal, allowed]) {
      s?.closeAllConnections();
      await new Promise((resolve) => s?.close(resolve));
    }
  }, 60_000);

  const http = () => (topology as Topology).http;
  /** Each test counts the connections it caused itself. */
  let connectionsBefore = 0;
  beforeEach(() => (connectionsBefore = internalConnections));
  const newConnections = () => internalConnections - connectionsBefore;
  let kbCount = 0;
  const createKb = async (t: Topology, learning_configuration: Record<string, unknown> = {}): Promise<string> => {
    const res = await t.http.call<{ id?: string; uuid?: string }>('POST', `/api/v1/account/${accountId}/kbs`, {
      credential: pat,
      body: { slug: `outbound-${Date.now()}-${++kbCount}`, title: 'outbound', learning_configuration },
    });
    expect(res.status).toBe(201);
    return (res.body.id ?? res.body.uuid) as string;
  };
  type FieldError = { body: string; code_str?: string };
  type Fields = Record<string, { error?: FieldError }>;
  type Errored = { metadata: { status: string }; data: { links?: Fields; files?: Fields; texts?: Fields } };
  const processed = (kb: string, rid: string): Promise<Errored> =>
    http().eventually(
      async () => {
        const r = await http().call<Errored>('GET', `/api/v1/kb/${kb}/resource/${rid}?show=basic&show=errors`, { credential: pat });
        return ['PROCESSED', 'ERROR'].includes(r.body.metadata?.status) ? r.body : undefined;
      },
      60_000,
      `resource ${rid} processed`,
    );
  /** The status item of an /ask, streamed as NDJSON. */
  const askStatus = async (t: Topology, kb: string): Promise<{ status?: string; details?: string }> => {
    const res = await fetch(`${t.http.baseUrl}/api/v1/kb/${kb}/ask`, {
      method: 'POST',
      headers: { authorization: (pat as { value: string }).value, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'What does the note say?' }),
    });
    expect(res.status).toBe(200);
    const items = (await res.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { item: { type: string; status?: string; details?: string } }).item);
    return items.find((i) => i.type === 'status') ?? {};
  };

  it('refuses link and file fields naming the internal service, in every spelling of loopback', async () => {
    const kb = await createKb(topology as Topology);
    const p = internalPort;
    // Link addresses pass the API's URL check; the numeric spellings it refuses go in as file addresses.
    const linkUris = {
      plain: `http://127.0.0.1:${p}/`,
      mapped: `http://[::ffff:127.0.0.1]:${p}/`,
      name: `http://localhost:${p}/`,
      any: `http://0.0.0.0:${p}/`,
      v6: `http://[::1]:${p}/`,
    };
    const fileUris = {
      short: `http://127.1:${p}/a.html`,
      hex: `http://0x7f.1:${p}/a.html`,
      decimal: `http://2130706433:${p}/a.html`,
      octal: `http://0177.0.0.1:${p}/a.html`,
    };
    const links = Object.fromEntries(Object.entries(linkUris).map(([k, uri]) => [k, { uri }]));
    const files = Object.fromEntries(Object.entries(fileUris).map(([k, uri]) => [k, { file: { uri, filename: 'a.html' } }]));
    const created = await http().call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Probe', links, files },
    });
    expect(created.status).toBe(201);
    // The resource turns ERROR with its first failed field: wait for every field's verdict.
    const resource = await http().eventually(
      async () => {
        const r = await processed(kb, created.body.uuid);
        const done =
          Object.keys(linkUris).every((n) => r.data.links?.[n]?.error) && Object.keys(fileUris).every((n) => r.data.files?.[n]?.error);
        return done ? r : undefined;
      },
      60_000,
      'every field to fail',
    );
    for (const name of Object.keys(linkUris))
      expect([name, resource.data.links?.[name]?.error?.code_str]).toEqual([name, 'FORBIDDEN_ADDRESS']);
    for (const name of Object.keys(fileUris))
      expect([name, resource.data.files?.[name]?.error?.code_str]).toEqual([name, 'FORBIDDEN_ADDRESS']);
    expect(JSON.stringify(resource)).not.toContain('INTERNAL-SECRET');
    expect(newConnections()).toBe(0);
  });

  it('refuses a redirect from an allowed host to the internal service', async () => {
    const kb = await createKb(topology as Topology);
    const created = await http().call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Hop', links: { hop: { uri: `${allowedUrl}/to-internal` } } },
    });
    const resource = await processed(kb, created.body.uuid);
    expect(resource.data.links?.['hop']?.error?.code_str).toBe('FORBIDDEN_ADDRESS');
    expect(newConnections()).toBe(0);
  });

  it('refuses a generative provider in user_keys on loopback: /ask says so, the provider sees nothing', async () => {
    const kb = await createKb(topology as Topology, {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: llm.openAiUrl, key: 'sk-probe', timeout_ms: 5000 } },
    });
    const created = await http().call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Note', texts: { body: { body: 'The note says the tide turns at six.' } } },
    });
    await processed(kb, created.body.uuid);
    const status = await askStatus(topology as Topology, kb);
    expect(status.status).toBe('error');
    expect(status.details).toMatch(/generative provider 127\.0\.0\.1:\d+ is not reachable: .*not a public address/);
    // Neither /ask nor the question/answer pairs of the processed field reached it.
    expect(llm.requests).toHaveLength(0);
  });

  it('refuses an embedding provider in user_keys on loopback: the field error says so', async () => {
    const kb = await createKb(topology as Topology, {
      semantic_models: ['hf_embedding'],
      default_semantic_model: 'hf_embedding',
      user_keys: { openai_compatible: { url: `http://127.0.0.1:${internalPort}/v1`, key: 'sk-probe', model: 'probe', size: 8 } },
    });
    const created = await http().call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Note', texts: { body: { body: 'The tide turns at six.' } } },
    });
    const resource = await processed(kb, created.body.uuid);
    expect(resource.metadata.status).toBe('ERROR');
    expect(resource.data.texts?.['body']?.error?.body).toMatch(/embedding provider not reachable: .*127\.0\.0\.1 is not a public address/);
    expect(newConnections()).toBe(0);
  });

  it('refuses a webhook on loopback: the delivery fails at once, the internal service sees nothing', async () => {
    const kb = await createKb(topology as Topology);
    const ua = await http().call<{ token: string }>('POST', `/api/v1/account/${accountId}/nua_clients`, {
      credential: pat,
      body: { contact: 'probe@example.com' },
    });
    const uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` };
    const pushed = await http().call<{ processing_id: string }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: {
        kbid: kb,
        title: 'Hooked',
        textfield: { body: { body: 'Flags.' } },
        webhook_config: { uri: `http://127.0.0.1:${internalPort}/hook` },
      },
    });
    expect(pushed.status).toBe(200);
    const delivery = await http().eventually(
      async () => {
        const res = await http().call<{
          deliveries: { status: string; attempts: { status_code: number | null; error: string | null }[] }[];
        }>('GET', `/api/v1/processing/requests/${pushed.body.processing_id}/webhooks`, { credential: uaKey });
        return res.body.deliveries?.[0]?.status === 'failed' ? res.body.deliveries[0] : undefined;
      },
      30_000,
      'the delivery to fail',
    );
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ status_code: null, error: expect.stringMatching(/127\.0\.0\.1 is not a public address/) }),
    ]);
    expect(newConnections()).toBe(0);
  });

  it('names the provider and the status of a failure, never the body it answered', async () => {
    const kb = await createKb(topology as Topology, {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: `${allowedUrl}/v1`, key: 'sk-probe', timeout_ms: 5000 } },
    });
    await http().call('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Note', texts: { body: { body: 'The note says the tide turns at six.' } } },
    });
    const status = await http().eventually(
      async () => {
        const s = await askStatus(topology as Topology, kb);
        return s.details?.includes('answered HTTP 500') ? s : undefined;
      },
      30_000,
      'an /ask that reaches the provider',
    );
    expect(status.details).toMatch(/generative provider 127\.0\.0\.2:\d+ answered HTTP 500 \(internal error\)/);
    expect(status.details).not.toContain('INTERNAL-SECRET');
  });

  // A second deployment: worth it once (standalone), where it costs one process.
  if (!options.restartWithAllowList) return;
  it('lets the same provider call through once the operator allows 127.0.0.1 (OUTBOUND_ALLOW_CIDRS)', async () => {
    await topology?.stop();
    topology = await start({ PROCESSING_ALLOW_PRIVATE_NETWORKS: 'false', OUTBOUND_ALLOW_CIDRS: '127.0.0.1/32' });
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    accountId = boot.account.id;
    const kb = await createKb(topology, {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: llm.openAiUrl, key: 'sk-probe', timeout_ms: 5000 } },
    });
    const created = await http().call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Note', texts: { body: { body: 'The note says the tide turns at six.' } } },
    });
    await processed(kb, created.body.uuid);
    llm.setDefault({ chunks: ['It turns ', 'at six.'] });
    const status = await askStatus(topology, kb);
    expect(['success', 'no_context']).toContain(status.status);
    expect(llm.requests.length).toBeGreaterThan(0);
    expect(llm.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-probe');
  }, 120_000);
}
