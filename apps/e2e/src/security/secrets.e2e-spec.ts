import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiKey, bearer, type Credential, type HttpClient } from '../support/http-client';
import { startStandalone, type Topology } from '../support/topologies';
import { concreteGetPaths, visibleText, type WalkIds } from './get-route-walk';

/**
 * Secrets are write-only (issue 16, docs/security.md). The attack: a caller with any role on the
 * KB, or the account's owner, reads back a credential someone stored — a provider key, a header or
 * cookie the service sends on a tenant's behalf, a file password, a webhook's credentials. Known
 * secret strings are stored everywhere they can be, then every GET route of the gateway is read
 * by every kind of caller, and no response (body, headers, decoded pull payloads) may show one.
 */
const run = randomBytes(4).toString('hex');
const S = {
  ukKey: `uk-key-${run}`,
  ukHeader: `uk-header-${run}`,
  ukUrlPass: `ukurlpass${run}`,
  ukUrlKey: `ukurlkey${run}`,
  linkHeader: `link-header-${run}`,
  linkCookie: `link-cookie-${run}`,
  linkStorage: `link-storage-${run}`,
  filePassword: `file-password-${run}`,
  fileHeader: `file-header-${run}`,
  uploadPassword: `upload-password-${run}`,
  tusPassword: `tus-password-${run}`,
  hookHeader: `hook-header-${run}`,
  hookToken: `hooktoken${run}`,
  pushHeader: `push-header-${run}`,
  pushPass: `pushpass${run}`,
  pushLinkHeader: `push-link-header-${run}`,
  processingPassword: `processing-password-${run}`,
};
const SECRET_MASK = '********';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('secrets are write-only (standalone)', () => {
  let topology: Topology;
  let http: HttpClient;
  let site: Server;
  let siteUrl: string;
  /** What the local site received: the link fetches (their headers) and webhook calls. */
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const callers: { name: string; credential: Credential }[] = [];
  let ids: WalkIds;
  let pat: Credential;
  let writer: Credential;
  let manager: Credential;
  let uaKey: Credential;

  beforeAll(async () => {
    site = createServer((req, res) => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      req.resume();
      if (req.url?.startsWith('/hook')) return void res.writeHead(204).end();
      if (req.url === '/remote.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('Remote notes about secret keeping.');
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<html><head><title>Vault</title></head><body><article><p>A page about secret keeping.</p></article></body></html>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    const account = boot.account.id;
    const kbid = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug: `secrets-${run}` } })
    ).body.id;
    const key = async (role: string) => {
      const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_accounts`, {
        credential: pat,
        body: { role },
      });
      const k = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_account/${sa.body.id}/keys`, {
        credential: pat,
        body: { expires: new Date(Date.now() + 3600_000).toISOString() },
      });
      return apiKey(k.body.token);
    };
    const reader = await key('SMEMBER');
    writer = await key('SCONTRIBUTOR');
    manager = await key('SOWNER');
    const login = await http.call<{ token: string }>('POST', '/api/v1/auth/login', {
      body: { email: boot.user.email, password: boot.user.password },
    });

    // Provider keys: a key, a header, and a URL with user information and a key in its query.
    const config = await http.call('PATCH', `/api/v1/kb/${kbid}/configuration`, {
      credential: manager,
      body: {
        user_keys: {
          openai_compatible: {
            key: S.ukKey,
            model: 'toy',
            url: `https://user:${S.ukUrlPass}@llm.example/v1?api_key=${S.ukUrlKey}`,
            headers: { 'X-Api-Key': S.ukHeader },
          },
        },
      },
    });
    expect([200, 204]).toContain(config.status);

    // A resource with a link fetched with headers, cookies and local storage, and files with a password and fetch headers.
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: writer,
      body: {
        title: 'Secret keeping',
        slug: 'secret-keeping',
        texts: { t: { body: 'Plain text about secret keeping.' } },
        links: {
          page: {
            uri: `${siteUrl}/page`,
            headers: { Authorization: `Bearer ${S.linkHeader}` },
            cookies: { session: S.linkCookie },
            localstorage: { jwt: S.linkStorage },
          },
        },
        files: {
          doc: { file: { filename: 'locked.txt', content_type: 'text/plain', payload: b64('Locked notes.') }, password: S.filePassword },
          ext: {
            file: {
              uri: `${siteUrl}/remote.txt`,
              filename: 'remote.txt',
              content_type: 'text/plain',
              extra_headers: { Authorization: S.fileHeader },
            },
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const upload = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/upload`, {
      method: 'POST',
      headers: {
        [writer!.header]: writer!.value,
        'content-type': 'text/plain',
        'x-filename': 'uploaded.txt',
        'x-password': S.uploadPassword,
      },
      body: 'Uploaded notes.',
    });
    expect(upload.status).toBe(201);
    const uploaded = (await upload.json()) as { uuid: string; field_id: string };
    const tusCreate = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload`, {
      method: 'POST',
      headers: {
        [writer!.header]: writer!.value,
        'tus-resumable': '1.0.0',
        'upload-length': '10',
        'upload-metadata': `filename ${b64('tus.txt')},password ${b64(S.tusPassword)}`,
      },
    });
    const tusId = (tusCreate.headers.get('location') ?? '').split('/').pop() ?? '';
    const tusDone = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload/${tusId}`, {
      method: 'PATCH',
      headers: {
        [writer!.header]: writer!.value,
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: 'TUS notes.',
    });
    expect(tusDone.status).toBe(200);
    const tus = (await tusDone.json()) as { uuid: string; field_id: string };

    // An understanding-API client with a webhook, and a push with its own webhook and a link with headers.
    const client = await http.call<{ token: string; client_id: string }>('POST', `/api/v1/account/${account}/nua_clients`, {
      credential: pat,
      body: {
        contact: 'ops@example.com',
        processing_webhook: { uri: `${siteUrl}/hook/client?token=${S.hookToken}`, headers: { 'X-Hook-Auth': S.hookHeader } },
      },
    });
    expect(client.status).toBe(201);
    uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };
    const staged = await fetch(`${http.baseUrl}/api/v1/processing/upload`, {
      method: 'POST',
      headers: {
        [uaKey.header]: uaKey.value,
        'content-type': 'text/plain',
        'x-filename': 'staged.txt',
        'x-password': S.processingPassword,
      },
      body: 'Staged notes.',
    });
    expect(staged.status).toBe(201);
    const pushed = await http.call<{ uuid: string; processing_id: string }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: {
        kbid,
        title: 'Pushed secrets',
        textfield: { a: { body: 'Pushed text about secret keeping.' } },
        filefield: { staged: (await staged.json()) as string },
        linkfield: { l: { link: `${siteUrl}/pushed-page`, headers: { Authorization: S.pushLinkHeader } } },
        webhook_config: { uri: `http://hook:${S.pushPass}@127.0.0.1:1/hook/push`, headers: { 'X-Push-Auth': S.pushHeader } },
      },
    });
    expect(pushed.status).toBe(200);
    await http.eventually(
      async () => {
        const hooks = await http.call<{ deliveries: { attempts: unknown[] }[] }>(
          'GET',
          `/api/v1/processing/requests/${pushed.body.processing_id}/webhooks`,
          { credential: uaKey },
        );
        return (hooks.body.deliveries?.[0]?.attempts.length ?? 0) > 0 ? true : undefined;
      },
      60_000,
      'the push webhook to be attempted',
    );
    await http.eventually(
      async () => {
        const r = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kbid}/resource/${created.body.uuid}`, {
          credential: reader,
        });
        return r.body.metadata?.status !== 'PENDING' ? true : undefined;
      },
      60_000,
      'the resource to be processed',
    );

    ids = {
      kbid,
      kbSlug: `secrets-${run}`,
      account,
      clientId: client.body.client_id,
      processingId: pushed.body.processing_id,
      labelset: 'no-such-labelset',
      resources: [
        {
          rid: created.body.uuid,
          slug: 'secret-keeping',
          fields: [
            ['link', 'page'],
            ['file', 'doc'],
            ['file', 'ext'],
            ['text', 't'],
          ],
        },
        { rid: uploaded.uuid, slug: uploaded.uuid, fields: [['file', uploaded.field_id]] },
        { rid: tus.uuid, slug: tus.uuid, fields: [['file', tus.field_id]] },
        {
          rid: pushed.body.uuid,
          slug: pushed.body.uuid,
          fields: [
            ['link', 'l'],
            ['file', 'staged'],
            ['text', 'a'],
          ],
        },
      ],
    };
    callers.push(
      { name: 'Reader key', credential: reader },
      { name: 'Writer key', credential: writer },
      { name: 'Manager key', credential: manager },
      { name: "the account owner's user token", credential: bearer(login.body.token) },
      { name: 'the UA key', credential: uaKey },
    );
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
    await new Promise((r) => site?.close(r));
  }, 60_000);

  it('no GET route shows a stored secret to any caller, whatever the query', async () => {
    const { paths, unfillable } = concreteGetPaths(ids);
    // A GET route the walk cannot fill is a route nobody checked: add its parameter to get-route-walk.ts.
    expect(unfillable).toEqual([]);
    const leaks: string[] = [];
    let answered = 0;
    for (const path of paths) {
      for (const caller of callers) {
        const res = await fetch(`${http.baseUrl}${path}`, {
          headers: caller.credential ? { [caller.credential.header]: caller.credential.value } : {},
          redirect: 'manual',
        });
        const text = visibleText(res.headers, await res.text());
        if (res.status < 300) answered++;
        for (const [name, secret] of Object.entries(S))
          if (text.includes(secret)) leaks.push(`${path} as ${caller.name} (${res.status}) shows ${name}`);
      }
    }
    expect(leaks).toEqual([]);
    // The walk read real data, not a wall of refusals.
    expect(answered).toBeGreaterThan(paths.length);
  }, 300_000);

  it('shows where a secret is set, masked, so a client can tell it is configured', async () => {
    const [res] = ids.resources;
    const read = await http.call<{
      data: { links: Record<string, { value: Record<string, unknown> }>; files: Record<string, { value: Record<string, unknown> }> };
    }>('GET', `/api/v1/kb/${ids.kbid}/resource/${res!.rid}?show=values`, { credential: callers[0]!.credential });
    expect(read.body.data.links['page']?.value).toMatchObject({
      headers: { Authorization: SECRET_MASK },
      cookies: { session: SECRET_MASK },
      localstorage: { jwt: SECRET_MASK },
    });
    expect(read.body.data.files['doc']?.value).toMatchObject({ password: SECRET_MASK });
    expect(read.body.data.files['ext']?.value).toMatchObject({ file: { extra_headers: { Authorization: SECRET_MASK } } });
    const config = await http.call<{ user_keys: Record<string, Record<string, unknown>> }>('GET', `/api/v1/kb/${ids.kbid}/configuration`, {
      credential: manager,
    });
    expect(config.body.user_keys['openai_compatible']).toEqual({
      key: SECRET_MASK,
      model: 'toy',
      url: `https://${SECRET_MASK}:${SECRET_MASK}@llm.example/v1?api_key=${SECRET_MASK}`,
      headers: { 'X-Api-Key': SECRET_MASK },
    });
  });

  it('a link sent back as read (headers masked) is fetched with the stored headers and cookies, not the mask', async () => {
    const [res] = ids.resources;
    const read = await http.call<{ data: { links: Record<string, { value: Record<string, unknown> }> } }>(
      'GET',
      `/api/v1/kb/${ids.kbid}/resource/${res!.rid}?show=values`,
      { credential: writer },
    );
    const { uri, headers, cookies, localstorage } = read.body.data.links['page']!.value;
    const before = seen.length;
    const patched = await http.call('PATCH', `/api/v1/kb/${ids.kbid}/resource/${res!.rid}`, {
      credential: writer,
      body: { links: { page: { uri, headers, cookies, localstorage } } },
    });
    expect(patched.status).toBe(200);
    const fetched = await http.eventually(
      async () => seen.slice(before).find((s) => s.path === '/page'),
      60_000,
      'the link to be fetched again',
    );
    expect(fetched.headers['authorization']).toBe(`Bearer ${S.linkHeader}`);
    expect(fetched.headers['cookie']).toContain(`session=${S.linkCookie}`);
  }, 90_000);

  it('a client webhook sent back as read (masked) keeps calling with the stored headers', async () => {
    const path = `/api/v1/account/${ids.account}/nua_client/${ids.clientId}`;
    const read = await http.call<{ processing_webhook: { uri: string; headers: Record<string, string> } }>('GET', path, {
      credential: pat,
    });
    expect(read.body.processing_webhook).toEqual({
      uri: `${siteUrl}/hook/client?token=${SECRET_MASK}`,
      headers: { 'X-Hook-Auth': SECRET_MASK },
    });
    const patched = await http.call('PATCH', path, { credential: pat, body: { processing_webhook: read.body.processing_webhook } });
    expect([patched.status, patched.body]).toEqual([200, null]);
    const before = seen.length;
    const pushed = await http.call('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: { kbid: ids.kbid, title: 'Hooked', textfield: { a: { body: 'Hooked text.' } } },
    });
    expect(pushed.status).toBe(200);
    const call = await http.eventually(
      async () => seen.slice(before).find((s) => s.path.startsWith('/hook/client')),
      60_000,
      'the client webhook to be called',
    );
    expect(call.path).toBe(`/hook/client?token=${S.hookToken}`);
    expect(call.headers['x-hook-auth']).toBe(S.hookHeader);
  }, 90_000);
});
