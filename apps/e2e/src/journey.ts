import { createHmac } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiKey, bearer, type HttpClient } from './support/http-client';
import type { BootstrapFile, Topology } from './support/topologies';

/**
 * The walking-skeleton journey, run unchanged against both topologies: the bootstrap user makes
 * a KB and keys; a Writer key creates, reads, lists, modifies and deletes a resource that gets
 * processed; a Reader key cannot write; credential mistakes get 400/401; bad bodies a full 422.
 */
export function describeJourney(start: () => Promise<Topology>): void {
  let topology: Topology;
  let http: HttpClient;
  let boot: BootstrapFile;
  let kbid: string;
  let writer: string;
  let reader: string;
  // Pages and files for link and file fields; the topologies allow private networks for it.
  let site: Server;
  let siteUrl: string;
  /** Requests for /slow-page: the first is held (never answered) until the test releases it. */
  let slowHits = 0;
  const held: ServerResponse[] = [];
  /** Webhook calls received on /hook; the first call of each delivery is answered 500. */
  const hooks: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.url === '/article') {
        return res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            '<html lang="en"><head><title>Lighthouses</title><meta name="description" content="Guides for ships."></head><body><article>' +
              '<p>A lighthouse guides ships away from dangerous rocks at night.</p><p>See <a href="https://lights.example.com/list">the list</a>.</p></article></body></html>',
          );
      }
      if (req.url === '/hook' && req.method === 'POST') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const first = !hooks.some((h) => h.headers['x-webhook-id'] === req.headers['x-webhook-id']);
          hooks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(first ? 500 : 204).end();
        });
        return;
      }
      if (req.url === '/slow-page') {
        slowHits += 1;
        if (slowHits === 1) return void held.push(res);
        return res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            '<html lang="en"><head><title>Breakwaters</title></head><body><article><p>A breakwater shelters the harbour from storm waves.</p>' +
              '<p>Tetrapods of concrete absorb the energy of each wave.</p></article></body></html>',
          );
      }
      if (req.url === '/notes.txt' && req.headers['x-token'] === 'letmein')
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('Harbour notes.\n\nThe tide turns at six.');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    topology = await start();
    http = topology.http;
    boot = topology.bootstrap();
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await new Promise((resolve) => site?.close(resolve));
  }, 60_000);

  const pat = () => bearer(boot.personal_access_token.token);
  const waitForStatus = (rid: string, status: string) =>
    http.eventually(
      async () => {
        const res = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kbid}/resource/${rid}`, {
          credential: apiKey(writer),
        });
        return res.status === 200 && res.body.metadata.status === status ? res.body : undefined;
      },
      30_000,
      `resource ${rid} to be ${status}`,
    );

  it('the bootstrap user creates a Knowledge Box, service accounts and keys', async () => {
    const account = boot.account.id;
    const kb = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, {
      credential: pat(),
      body: { slug: `journey-${Date.now()}`, title: 'Journey' },
    });
    expect(kb.status).toBe(201);
    kbid = kb.body.id;

    const listed = await http.call<{ id: string; role_on_kb: string }[]>('GET', `/api/v1/account/${account}/kbs`, { credential: pat() });
    expect(listed.status).toBe(200);
    expect(listed.body.find((k) => k.id === kbid)?.role_on_kb).toBe('SOWNER');

    const keyFor = async (role: string) => {
      const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_accounts`, {
        credential: pat(),
        body: { title: role, role },
      });
      expect(sa.status).toBe(201);
      const expires = new Date(Date.now() + 24 * 3600 * 1000).toISOString();
      const key = await http.call<{ id: string; token: string }>(
        'POST',
        `/api/v1/account/${account}/kb/${kbid}/service_account/${sa.body.id}/keys`,
        { credential: pat(), body: { expires } },
      );
      expect(key.status).toBe(201);
      return key.body.token;
    };
    writer = await keyFor('SCONTRIBUTOR');
    reader = await keyFor('SMEMBER');

    const kbRecord = await http.call<{ id: string; admin: boolean }>('GET', `/api/v1/account/${account}/kb/${kbid}`, {
      credential: apiKey(reader),
    });
    expect(kbRecord.status).toBe(200);
    expect(kbRecord.body).toMatchObject({ id: kbid, admin: false });
  });

  it('a Writer key creates, reads, lists, modifies and deletes a resource that gets processed', async () => {
    const created = await http.call<{ uuid: string; seqid: number }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(writer),
      headers: { 'x-synchronous': 'true' },
      body: {
        title: 'The first resource',
        slug: 'first',
        texts: { body: { body: 'One paragraph here. With two sentences.\n\nAnother paragraph.', format: 'PLAIN' } },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ uuid: expect.any(String), seqid: expect.any(Number), elapsed: expect.any(Number) });
    const rid = created.body.uuid;

    const read = await http.call<{ id: string; title: string; slug: string }>('GET', `/api/v1/kb/${kbid}/resource/${rid}`, {
      credential: apiKey(reader),
    });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: rid, title: 'The first resource', slug: 'first' });

    const processed = await waitForStatus(rid, 'PROCESSED');
    expect(processed.metadata.status).toBe('PROCESSED');
    const full = await http.call<{
      data: {
        texts: {
          body: { extracted: { text: { text: string }; metadata: { metadata: { paragraphs: { start: number; end: number }[] } } } };
        };
      };
    }>('GET', `/api/v1/kb/${kbid}/slug/first?show=values&show=extracted`, { credential: apiKey(reader) });
    expect(full.status).toBe(200);
    expect(full.body.data.texts.body.extracted.metadata.metadata.paragraphs.map((p) => [p.start, p.end])).toEqual([
      [0, 39],
      [41, 59],
    ]);

    // The field's processing job has its status record, completed by now.
    const jobs = await http.call<{
      results: { resource_id: string; request: string; completed: boolean; failed: boolean; schedule_order: number }[];
      cursor: string | null;
    }>('GET', `/api/v1/kb/${kbid}/processing-status?limit=100`, { credential: apiKey(reader) });
    expect(jobs.status).toBe(200);
    expect(jobs.body.results.filter((j) => j.resource_id === rid)).toEqual([
      expect.objectContaining({ request: 'text/body', completed: true, failed: false, schedule_order: 0 }),
    ]);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/processing-status?limit=0`, { credential: apiKey(reader) })).status).toBe(422);
    // The understanding API sees the same record with an understanding-API client key of the account.
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat(),
      body: { contact: 'ops@example.com' },
    });
    expect(ua.status).toBe(201);
    const uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` };
    const processedData = await http.call<{ results: { processing_id: string; resource_id: string }[] }>(
      'GET',
      `/api/v1/processing/requests?kbid=${kbid}&sort_order=desc&limit=100`,
      { credential: uaKey },
    );
    expect(processedData.status).toBe(200);
    const mine = processedData.body.results.find((j) => j.resource_id === rid);
    expect(mine).toBeDefined();
    const one = await http.call<{ processing_id: string; completed: boolean }>(
      'GET',
      `/api/v1/processing/requests/${mine?.processing_id}`,
      { credential: uaKey },
    );
    expect(one.body).toMatchObject({ processing_id: mine?.processing_id, completed: true });
    expect((await http.call('GET', '/api/v1/processing/requests/no-such-job', { credential: uaKey })).status).toBe(404);
    expect((await http.call('GET', '/api/v1/processing/requests?sort_on=size', { credential: uaKey })).status).toBe(422);
    expect((await http.call('GET', '/api/v1/processing/requests', { credential: apiKey(reader) })).status).toBe(403);

    const list = await http.call<{ resources: { id: string }[]; pagination: { page: number; size: number; last: boolean } }>(
      'GET',
      `/api/v1/kb/${kbid}/resources?page=0&size=10`,
      { credential: apiKey(reader) },
    );
    expect(list.status).toBe(200);
    expect(list.body.resources.map((r) => r.id)).toContain(rid);
    expect(list.body.pagination).toEqual({ page: 0, size: 10, last: true });

    const modified = await http.call<{ seqid: number }>('PATCH', `/api/v1/kb/${kbid}/resource/${rid}`, {
      credential: apiKey(writer),
      body: { title: 'Renamed' },
    });
    expect(modified.status).toBe(200);
    expect(modified.body.seqid).toBeGreaterThan(created.body.seqid);
    expect(
      (await http.call<{ title: string }>('GET', `/api/v1/kb/${kbid}/resource/${rid}`, { credential: apiKey(writer) })).body.title,
    ).toBe('Renamed');

    const deleted = await http.call('DELETE', `/api/v1/kb/${kbid}/resource/${rid}`, { credential: apiKey(writer) });
    expect(deleted.status).toBe(204);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/resource/${rid}`, { credential: apiKey(writer) })).status).toBe(404);
    expect((await http.call('HEAD', `/api/v1/kb/${kbid}/resource/${rid}`, { credential: apiKey(writer) })).status).toBe(404);
  });

  it('an understanding-API client pushes data to process into a KB of its account (Send Data To Process)', async () => {
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat(),
      body: { contact: 'ops@example.com' },
    });
    expect(ua.status).toBe(201);
    const uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` };
    const pushed = await http.call<{ seqid: number; account_seq: number; queue: string; uuid: string; processing_id: string }>(
      'POST',
      '/api/v1/processing/push',
      {
        credential: uaKey,
        body: {
          kbid,
          uuid: null,
          title: 'Pushed',
          labels: ['nightly'],
          textfield: { body: { body: 'Pushed text about harbours.\n\nSecond paragraph.' } },
        },
      },
    );
    expect(pushed.status).toBe(200);
    expect(pushed.body).toEqual({
      seqid: expect.any(Number),
      account_seq: expect.any(Number),
      queue: 'shared',
      uuid: expect.any(String),
      processing_id: expect.any(String),
    });
    await waitForStatus(pushed.body.uuid, 'PROCESSED');
    const job = await http.call<{ processing_id: string; resource_id: string; completed: boolean; labels: string[]; request: string }>(
      'GET',
      `/api/v1/processing/requests/${pushed.body.processing_id}`,
      { credential: uaKey },
    );
    expect(job.body).toMatchObject({
      processing_id: pushed.body.processing_id,
      resource_id: pushed.body.uuid,
      completed: true,
      labels: ['nightly'],
      request: 'text/body',
    });
    const read = await http.call<{ title: string }>('GET', `/api/v1/kb/${kbid}/resource/${pushed.body.uuid}`, {
      credential: apiKey(reader),
    });
    expect(read.body.title).toBe('Pushed');

    // A KB outside the client's account is not found; what cannot be processed is a 422; other credentials are refused.
    const foreign = await http.call('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: { kbid: '00000000-0000-4000-8000-00000000f00d', textfield: { a: { body: 'x' } } },
    });
    expect(foreign.status).toBe(404);
    const withToken = await http.call<{ detail: { loc: (string | number)[] }[] }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: { kbid, filefield: { doc: 'token' }, textfield: { a: { body: 'x' } } },
    });
    expect(withToken.status).toBe(422);
    expect(withToken.body.detail.map((d) => d.loc)).toEqual([['body', 'filefield', 'doc']]);
    const invalid = await http.call<{ detail: { loc: (string | number)[] }[] }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: { textfield: { a: { body: 5 } } },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail.map((d) => d.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'kbid'],
        ['body', 'textfield', 'a', 'body'],
      ]),
    );
    expect(
      (await http.call('POST', '/api/v1/processing/push', { credential: apiKey(writer), body: { kbid, textfield: { a: { body: 'x' } } } }))
        .status,
    ).toBe(403);
  });

  it('an understanding-API client uploads files (raw and TUS) and pushes them by token', async () => {
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat(),
      body: { contact: 'files@example.com' },
    });
    const uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` };
    const upload = (body: string, headers: Record<string, string>) =>
      fetch(`${http.baseUrl}/api/v1/processing/upload`, { method: 'POST', headers: { [uaKey.header]: uaKey.value, ...headers }, body });
    const raw = await upload('Lighthouses guide ships along the rocky coast.', {
      'content-type': 'text/plain',
      'x-filename': encodeURIComponent('phare é.txt'),
    });
    expect(raw.status).toBe(201);
    expect(raw.headers.get('content-type')).toMatch(/application\/json/);
    const token = (await raw.json()) as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // TUS: two chunks, the last one answers with the token.
    const tus = (path: string, method: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${http.baseUrl}/api/v1/processing/tusupload${path}`, {
        method,
        headers: { [uaKey.header]: uaKey.value, 'tus-resumable': '1.0.0', ...headers },
        body,
      });
    const meta = `filename ${Buffer.from('minutes.md').toString('base64')}`;
    const created = await tus('', 'POST', { 'upload-length': '42', 'upload-metadata': meta });
    expect(created.status).toBe(201);
    const id = (created.headers.get('location') ?? '').split('/').pop() ?? '';
    const chunk1 = await tus(
      `/${id}`,
      'PATCH',
      { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      '# Minutes\n\nThe harbour ',
    );
    expect(chunk1.status).toBe(200);
    expect((await tus(`/${id}`, 'HEAD')).headers.get('upload-offset')).toBe('23');
    const chunk2 = await tus(
      `/${id}`,
      'PATCH',
      { 'upload-offset': '23', 'content-type': 'application/offset+octet-stream' },
      'master approved it.',
    );
    expect(chunk2.status).toBe(200);
    expect(chunk2.headers.get('tus-upload-finished')).toBe('1');
    const tusToken = (await chunk2.json()) as string;
    expect(tusToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Multipart, as the spec's table describes the upload.
    const form = new FormData();
    form.append('file', new Blob(['Breakwaters shelter moored boats.'], { type: 'text/plain' }), 'wall.txt');
    const multipart = await fetch(`${http.baseUrl}/api/v1/processing/upload`, {
      method: 'POST',
      headers: { [uaKey.header]: uaKey.value },
      body: form,
    });
    expect(multipart.status).toBe(201);
    const formToken = (await multipart.json()) as string;
    const noFile = new FormData();
    noFile.append('note', 'no file here');
    expect(
      (await fetch(`${http.baseUrl}/api/v1/processing/upload`, { method: 'POST', headers: { [uaKey.header]: uaKey.value }, body: noFile }))
        .status,
    ).toBe(422);

    const pushed = await http.call<{ uuid: string; processing_id: string }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: { kbid, title: 'Uploaded', filefield: { coast: token, minutes: tusToken, wall: formToken } },
    });
    expect(pushed.status).toBe(200);
    await waitForStatus(pushed.body.uuid, 'PROCESSED');
    const got = await http.call<{
      data: { files: Record<string, { value: { file: { filename: string } }; extracted: { text: { text: string } } }> };
    }>('GET', `/api/v1/kb/${kbid}/resource/${pushed.body.uuid}?show=values&show=extracted&extracted=text`, { credential: apiKey(reader) });
    expect(got.body.data.files['coast']?.value.file.filename).toBe('phare é.txt');
    expect(got.body.data.files['coast']?.extracted.text.text).toContain('Lighthouses guide ships');
    expect(got.body.data.files['minutes']?.extracted.text.text).toContain('The harbour master approved it.');
    expect(got.body.data.files['wall']?.value.file.filename).toBe('wall.txt');
    expect(got.body.data.files['wall']?.extracted.text.text).toBe('Breakwaters shelter moored boats.');
    const download = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/resource/${pushed.body.uuid}/file/coast/download/field`, {
      headers: { [apiKey(reader).header]: apiKey(reader).value },
    });
    expect(await download.text()).toBe('Lighthouses guide ships along the rocky coast.');

    // Pull: the processed results of the account's jobs, v1 by cursor, v2 by acknowledgement.
    type Doc = { processing_id: string; resource_id: string; status: string; extracted: { text: { text: string } } | null };
    const decode = (payload: string) => JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Doc;
    const v1 = await http.call<{ status: string; payloads: string[]; cursor: number; msgid: string }>(
      'GET',
      '/api/v1/processing/pull?limit=50&timeout=0',
      { credential: uaKey },
    );
    expect(v1.status).toBe(200);
    expect(v1.body.status).toBe('ok');
    const mineV1 = v1.body.payloads.map(decode).filter((d) => d.resource_id === pushed.body.uuid);
    expect(mineV1.map((d) => d.status)).toEqual(['PROCESSED', 'PROCESSED', 'PROCESSED']);
    expect(mineV1.map((d) => d.extracted?.text.text).join(' ')).toContain('Lighthouses guide ships');
    const drained = await http.call<{ status: string; payloads: string[]; cursor: number }>(
      'GET',
      `/api/v1/processing/pull?limit=50&from_cursor=${v1.body.cursor}&timeout=1`,
      { credential: uaKey },
    );
    expect(drained.body).toMatchObject({ status: 'empty', payloads: [], cursor: v1.body.cursor });
    let acks: string[] = [];
    const seen: Doc[] = [];
    for (;;) {
      const v2 = await http.call<{ messages: { payload: string; ack_token: string }[] }>('POST', '/api/v2/processing/pull', {
        credential: uaKey,
        body: { limit: 50, ack: acks },
      });
      if (v2.status === 204) break;
      expect(v2.status).toBe(200);
      seen.push(...v2.body.messages.map((m) => decode(m.payload)));
      acks = v2.body.messages.map((m) => m.ack_token);
    }
    expect(seen.map((d) => d.processing_id).sort()).toEqual(
      v1.body.payloads
        .map(decode)
        .map((d) => d.processing_id)
        .sort(),
    );
    expect((await http.call('POST', '/api/v2/processing/pull', { credential: uaKey, body: { timeout: 1 } })).status).toBe(204);
    expect((await http.call('GET', '/api/v1/processing/pull?partition=2&timeout=0', { credential: uaKey })).status).toBe(422);
    for (const bad of ['limit=0', 'limit=51', 'timeout=31', 'from_cursor=-1', 'partition=0', 'limit=abc']) {
      expect([bad, (await http.call('GET', `/api/v1/processing/pull?${bad}`, { credential: uaKey })).status]).toEqual([bad, 422]);
    }
    const badV2 = await http.call<{ detail: { loc: (string | number)[] }[] }>('POST', '/api/v2/processing/pull', {
      credential: uaKey,
      body: { limit: 0, timeout: 99, ack: 'x' },
    });
    expect(badV2.status).toBe(422);
    expect(badV2.body.detail.map((d) => d.loc.join('.')).sort()).toEqual(['body.ack', 'body.limit', 'body.timeout']);
    expect((await http.call('POST', '/api/v2/processing/pull', { credential: uaKey, body: { ack: ['not-a-token'] } })).status).toBe(422);
    // Uploads: an unknown TUS upload, a declared size over the limit, a wrong md5.
    expect((await tus('/0123456789abcdef0123456789abcdef', 'HEAD')).status).toBe(404);
    expect((await upload('abc', { 'content-type': 'text/plain', 'x-md5': '0'.repeat(32) })).status).toBe(422);
    expect((await http.call('GET', '/api/v1/processing/pull', { credential: apiKey(reader) })).status).toBe(403);

    // A token serves one push; unsupported types, and other credentials, are refused.
    const again = await http.call('POST', '/api/v1/processing/push', { credential: uaKey, body: { kbid, filefield: { again: token } } });
    expect(again.status).toBe(422);
    expect((await upload('MZ', { 'content-type': 'application/x-msdownload', 'x-filename': 'tool.exe' })).status).toBe(415);
    expect(
      (
        await fetch(`${http.baseUrl}/api/v1/processing/upload`, {
          method: 'POST',
          headers: { [apiKey(writer).header]: apiKey(writer).value },
          body: 'x',
        })
      ).status,
    ).toBe(403);
  });

  it('a push with a webhook_config is called back when processed: signed, retried, attempts visible', async () => {
    const ua = await http.call<{ token: string }>('POST', `/api/v1/account/${boot.account.id}/nua_clients`, {
      credential: pat(),
      body: { contact: 'hooks@example.com' },
    });
    const uaKey = { header: 'X-SVC-UAKEY', value: `Bearer ${ua.body.token}` };
    const pushed = await http.call<{ uuid: string; processing_id: string }>('POST', '/api/v1/processing/push', {
      credential: uaKey,
      body: {
        kbid,
        title: 'Hooked',
        labels: ['hooked'],
        textfield: { body: { body: 'Signal flags hang from the mast.' } },
        webhook_config: { uri: `${siteUrl}/hook`, headers: { 'x-receiver-token': 'abc' } },
      },
    });
    expect(pushed.status).toBe(200);
    const deliveries = await http.eventually(
      async () => {
        const res = await http.call<{
          deliveries: { id: string; event: string; status: string; attempts: { attempt: number; status_code: number | null }[] }[];
        }>('GET', `/api/v1/processing/requests/${pushed.body.processing_id}/webhooks`, { credential: uaKey });
        return res.body.deliveries?.[0]?.status === 'delivered' ? res.body.deliveries : undefined;
      },
      30_000,
      'the webhook to be delivered',
    );
    expect(deliveries).toEqual([expect.objectContaining({ event: 'processing.completed', status: 'delivered' })]);
    expect(deliveries[0]?.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 204],
    ]);

    // Two calls, same id; the body names the job; the signature verifies with the client's secret.
    const calls = hooks.filter((h) => h.headers['x-webhook-id'] === deliveries[0]?.id);
    expect(calls).toHaveLength(2);
    const body = JSON.parse(calls[1]?.body ?? '{}') as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'processing.completed',
      processing_id: pushed.body.processing_id,
      kbid,
      resource_id: pushed.body.uuid,
      status: 'PROCESSED',
      errors: [],
      labels: ['hooked'],
      field: { type: 'text', id: 'body' },
    });
    expect(calls[1]?.headers['x-receiver-token']).toBe('abc');
    const secret = await http.call<{ secret: string }>('GET', '/api/v1/processing/webhook-secret', { credential: uaKey });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(calls[1]?.headers['x-webhook-signature'])) ?? [];
    expect(v1).toBe(createHmac('sha256', secret.body.secret).update(`${t}.${calls[1]?.body}`).digest('hex'));
    // A job without a webhook has no deliveries; another account's job is not found.
    expect((await http.call('GET', '/api/v1/processing/requests/no-such-job/webhooks', { credential: uaKey })).status).toBe(404);
    expect((await http.call('GET', '/api/v1/processing/webhook-secret', { credential: apiKey(reader) })).status).toBe(403);
  });

  it('a link and a file given by address are fetched, extracted, analysed and embedded', async () => {
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(writer),
      body: {
        title: 'Fetched',
        slug: 'fetched',
        links: { page: { uri: `${siteUrl}/article` } },
        files: { notes: { file: { uri: `${siteUrl}/notes.txt`, content_type: 'text/plain', extra_headers: { 'x-token': 'letmein' } } } },
      },
    });
    expect(created.status).toBe(201);
    await waitForStatus(created.body.uuid, 'PROCESSED');
    type Extracted = {
      text?: { text: string };
      metadata?: { metadata: { links: string[]; language: string } };
      link?: { title: string };
      vectors?: { vectors: { vectors: { vector: number[] }[] } };
    };
    type Fields = { data: { links: { page: { extracted: Extracted } }; files: { notes: { extracted: Extracted } } } };
    const res = await http.call<Fields>(
      'GET',
      `/api/v1/kb/${kbid}/resource/${created.body.uuid}?show=extracted&extracted=text&extracted=metadata&extracted=link`,
      { credential: apiKey(reader) },
    );
    expect(res.status).toBe(200);
    const page = res.body.data.links.page.extracted;
    expect(page.text?.text).toContain('A lighthouse guides ships');
    expect(page.link?.title).toBe('Lighthouses');
    expect(page.metadata?.metadata).toMatchObject({ links: ['https://lights.example.com/list'], language: 'en' });
    expect(page.vectors).toBeUndefined();
    expect(res.body.data.files.notes.extracted.text?.text).toBe('Harbour notes.\n\nThe tide turns at six.');
    const vectors = await http.call<Fields>('GET', `/api/v1/kb/${kbid}/resource/${created.body.uuid}?show=extracted&extracted=vectors`, {
      credential: apiKey(reader),
    });
    expect(vectors.body.data.files.notes.extracted.vectors?.vectors.vectors.map((v) => v.vector.length)).toEqual([512, 512]);
    expect(vectors.body.data.files.notes.extracted.text).toBeUndefined();
  }, 60_000);

  it('a Reader key cannot write', async () => {
    const res = await http.call<{ detail: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(reader),
      body: { title: 'nope' },
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/WRITER/);
  });

  it('rejects two credentials, no credential and an unknown key', async () => {
    const two = await http.call<{ detail: string }>('GET', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(reader),
      headers: { Authorization: `Bearer ${boot.personal_access_token.token}` },
    });
    expect(two.status).toBe(400);
    expect(two.body.detail).toMatch(/Exactly one credential header/);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/resources`)).status).toBe(401);
    expect(
      (await http.call('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey('kbk_' + '0'.repeat(32) + '_' + 'A'.repeat(43)) }))
        .status,
    ).toBe(401);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(boot.api_key.token) })).status).toBe(403);
  });

  it('a bad body gets 422 listing every invalid member, and nothing is created', async () => {
    const before = await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(reader) });
    const res = await http.call<{ detail: { loc: (string | number)[]; type: string }[] }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(writer),
      body: { title: 42, slug: 'not a slug', hidden: 'yes', texts: { 'bad id!': { body: 'x' }, ok: { format: 'WORD' } } },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d) => d.loc.join('.')).sort()).toEqual([
      'body.hidden',
      'body.slug',
      'body.texts.bad id!',
      'body.texts.ok.body',
      'body.texts.ok.format',
      'body.title',
    ]);
    const malformed = await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(writer), body: '{"title": ' });
    expect(malformed.status).toBe(422);
    const after = await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(reader) });
    expect(after.body.resources.length).toBe(before.body.resources.length);
  });

  it('a slug is unique in its Knowledge Box', async () => {
    const body = { title: 'A', slug: 'unique-slug' };
    expect((await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(writer), body })).status).toBe(201);
    const again = await http.call<{ detail: string }>('POST', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(writer), body });
    expect(again.status).toBe(409);
  });

  it('a deleted key stops working at once', async () => {
    const account = boot.account.id;
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_accounts`, {
      credential: pat(),
      body: { title: 'temp', role: 'SMEMBER' },
    });
    const key = await http.call<{ id: string; token: string }>(
      'POST',
      `/api/v1/account/${account}/kb/${kbid}/service_account/${sa.body.id}/keys`,
      {
        credential: pat(),
        body: { expires: new Date(Date.now() + 3600_000).toISOString() },
      },
    );
    expect((await http.call('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(key.body.token) })).status).toBe(200);
    expect(
      (
        await http.call('DELETE', `/api/v1/account/${account}/kb/${kbid}/service_account/${sa.body.id}/key/${key.body.id}`, {
          credential: pat(),
        })
      ).status,
    ).toBe(204);
    await http.eventually(
      async () =>
        (await http.call('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(key.body.token) })).status === 401 ? true : undefined,
      2000,
      'revocation',
    );
  });

  it("enforces the KB's allowed_origins as CORS for browser callers", async () => {
    const origin = 'https://app.example.com';
    const preflight = (o: string) =>
      http.call('OPTIONS', `/api/v1/kb/${kbid}/resources`, {
        headers: {
          Origin: o,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'x-svc-serviceaccount, content-type',
        },
      });
    expect((await preflight(origin)).status).toBe(403);
    const patched = await http.call('PATCH', `/api/v1/account/${boot.account.id}/kb/${kbid}`, {
      credential: pat(),
      body: { allowed_origins: [origin] },
    });
    expect(patched.status).toBe(200);
    const ok = await http.eventually(
      async () => {
        const res = await preflight(origin);
        return res.status === 204 ? res : undefined;
      },
      5000,
      'the new allowed origin',
    );
    expect(ok.headers.get('access-control-allow-origin')).toBe(origin);
    expect(ok.headers.get('access-control-allow-headers')).toContain('x-svc-serviceaccount');
    expect((await preflight('https://evil.example.com')).status).toBe(403);
    const read = await http.call('GET', `/api/v1/kb/${kbid}/resources`, { credential: apiKey(reader), headers: { Origin: origin } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-expose-headers')).toContain('upload-offset');
    expect(
      (
        await http.call('GET', `/api/v1/kb/${kbid}/resources`, {
          credential: apiKey(reader),
          headers: { Origin: 'https://evil.example.com' },
        })
      ).status,
    ).toBe(403);
  });

  it('serves health, metrics and the OpenAPI document without a credential', async () => {
    const ready = await http.call<{ status: string; checks: Record<string, string> }>('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    expect((await http.call('GET', '/health/live')).status).toBe(200);
    const metrics = await http.call<string>('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('kb_http_request_duration_seconds');
    const doc = await http.call<{ openapi: string; paths: Record<string, unknown> }>('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toContain('/api/v1/kb/{kbid}/resource/{rid}');
    expect((await http.call<string>('GET', '/api/docs')).body).toContain('swagger');
    expect((await http.call('GET', '/api/v1/nowhere')).status).toBe(404);
  });

  it('a worker killed in the middle of a job: the job is handed on and completes exactly once', async () => {
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(writer),
      body: { title: 'Mid-job crash', links: { page: { uri: `${siteUrl}/slow-page` } } },
    });
    expect(created.status).toBe(201);
    // The worker is fetching the page (its first request is held) when its process dies.
    await http.eventually(async () => (slowHits >= 1 ? true : undefined), 30_000, 'the worker to start the job');
    await topology.crashProcessing();
    for (const res of held.splice(0)) res.destroy();
    await topology.recoverProcessing();
    const done = await waitForStatus(created.body.uuid, 'PROCESSED');
    expect(done.metadata.status).toBe('PROCESSED');
    expect(slowHits).toBe(2);

    // One job, completed once, on its second delivery; its paragraphs stored and indexed once.
    const records = await http.call<{
      results: { resource_id: string; request: string; completed: boolean; failed: boolean; retries: number }[];
    }>('GET', `/api/v1/kb/${kbid}/processing-status?limit=100`, { credential: apiKey(reader) });
    expect(records.body.results.filter((r) => r.resource_id === created.body.uuid)).toEqual([
      expect.objectContaining({ request: 'link/page', completed: true, failed: false, retries: 1 }),
    ]);
    const full = await http.call<{
      data: { links: { page: { extracted: { metadata: { metadata: { paragraphs: { kind: string }[] } } } } } };
    }>('GET', `/api/v1/kb/${kbid}/resource/${created.body.uuid}?show=extracted&extracted=metadata`, { credential: apiKey(reader) });
    expect(full.body.data.links.page.extracted.metadata.metadata.paragraphs.map((p) => p.kind)).toEqual(['TITLE', 'TEXT', 'TEXT']);
    const found = await http.call<{ resources: Record<string, { fields: Record<string, { paragraphs: Record<string, unknown> }> }> }>(
      'GET',
      `/api/v1/kb/${kbid}/find?query=tetrapods&features=keyword`,
      { credential: apiKey(reader) },
    );
    const paragraphs = Object.values(found.body.resources[created.body.uuid]?.fields ?? {}).flatMap((f) => Object.keys(f.paragraphs));
    expect(paragraphs).toHaveLength(1);
    // Nothing is delivered again afterwards.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(slowHits).toBe(2);
  }, 120_000);

  it('a queued processing job survives a crash of the content process', async () => {
    await topology.stopProcessing();
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: apiKey(writer),
      body: { title: 'Queued', texts: { body: { body: 'Survives a crash.' } } },
    });
    expect(created.status).toBe(201);
    const pending = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kbid}/resource/${created.body.uuid}`, {
      credential: apiKey(writer),
    });
    expect(pending.body.metadata.status).toBe('PENDING');
    await topology.crashContent();
    await topology.recover();
    const done = await waitForStatus(created.body.uuid, 'PROCESSED');
    expect(done.metadata.status).toBe('PROCESSED');
  }, 120_000);
}
