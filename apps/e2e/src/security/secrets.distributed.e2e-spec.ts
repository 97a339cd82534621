import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer, type HttpClient } from '../support/http-client';
import { startDistributed, type Topology } from '../support/topologies';

/**
 * The one path of secrets.e2e-spec.ts that differs between topologies: over NATS, the gateway
 * reads a client's masked record from accounts, and the push reads its webhook in clear over the
 * internal subject. Masking itself runs in the services, the same code in both topologies.
 */
const run = randomBytes(4).toString('hex');
const HOOK_HEADER = `hook-header-${run}`;
const PROVIDER_KEY = `provider-key-${run}`;
const MASK = '********';

describe('secrets are write-only (distributed)', () => {
  let topology: Topology;
  let http: HttpClient;
  let site: Server;
  let siteUrl: string;
  const hooks: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    site = createServer((req, res) => {
      hooks.push(req.headers);
      req.resume();
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    topology = await startDistributed();
    http = topology.http;
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
    await new Promise((r) => site?.close(r));
  }, 60_000);

  it('masks provider keys and client webhooks read over NATS, and calls the webhook with the stored headers', async () => {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const kbid = boot.kb.id;
    await http.call('PATCH', `/api/v1/kb/${kbid}/configuration`, {
      credential: pat,
      body: { user_keys: { openai: { key: PROVIDER_KEY, model: 'gpt-4o' } } },
    });
    const config = await http.call<{ user_keys: unknown }>('GET', `/api/v1/kb/${kbid}/configuration`, { credential: pat });
    expect(config.body.user_keys).toEqual({ openai: { key: MASK, model: 'gpt-4o' } });

    const client = await http.call<{ token: string; client_id: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat,
      body: { contact: 'ops@example.com', processing_webhook: { uri: `${siteUrl}/hook`, headers: { 'X-Hook-Auth': HOOK_HEADER } } },
    });
    const read = await http.call<{ processing_webhook: unknown }>(
      'GET',
      `/api/v1/account/${boot.account.id}/nua_client/${client.body.client_id}`,
      { credential: pat },
    );
    expect(read.body.processing_webhook).toEqual({ uri: `${siteUrl}/hook`, headers: { 'X-Hook-Auth': MASK } });
    const pushed = await http.call('POST', '/api/v1/processing/push', {
      credential: { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` },
      body: { kbid, title: 'Hooked', textfield: { a: { body: 'Hooked text.' } } },
    });
    expect(pushed.status).toBe(200);
    const call = await http.eventually(async () => hooks[0], 60_000, 'the client webhook to be called');
    expect(call['x-hook-auth']).toBe(HOOK_HEADER);
  }, 90_000);
});
