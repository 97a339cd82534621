import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { apiKey, type HttpClient } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

/** One bad request, what it must answer, and (implicitly) that it changes nothing in the KB. */
interface Row {
  name: string;
  method: string;
  /** Under /api/v1/kb/{kbid}. */
  path: string;
  headers?: Record<string, string>;
  /** JSON-encoded unless `raw` is given. */
  json?: unknown;
  raw?: string;
  /** Sends only headers claiming this Content-Length (a client announcing a huge body). */
  declaredLength?: number;
  status: 404 | 409 | 413 | 415 | 422;
  /** For 422: the `loc` of the (first) reported member. */
  loc?: (string | number)[];
  /** For other statuses: the human message. */
  detail?: RegExp;
}

const MISSING = '00000000-0000-4000-8000-000000000000';
const JSON_LIMIT = 64 * 1024;
const KEEP_ALIVE_MS = 1_500;

/**
 * Every kind of bad input over HTTP gets the spec's status and error body, and leaves the KB as
 * it was: same resources (and field values), same label sets, same objects in the blob store.
 */
describe('content API — bad input changes nothing', () => {
  let topology: Topology;
  let http: HttpClient;
  let blobRoot: string;
  let blobs: BlobStore;
  let kbid: string;
  let key: ReturnType<typeof apiKey>;
  let rid: string;
  let docMd5: string;

  beforeAll(async () => {
    blobRoot = mkdtempSync(join(tmpdir(), 'kb-e2e-bad-input-blobs-'));
    topology = await startStandalone({
      JSON_BODY_LIMIT: `${JSON_LIMIT}b`,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      BLOB_FS_ROOT: blobRoot,
    });
    http = topology.http;
    const boot = topology.bootstrap();
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
    blobs = await createBlobStore({ driver: 'fs', root: blobRoot, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });

    // The KB the bad requests aim at: a processed resource with every kind of field, and a taken slug.
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: {
        title: 'Existing',
        slug: 'existing',
        texts: { body: { body: 'Some text.' } },
        conversations: { chat: { messages: [{ ident: 'm1', content: { text: 'Hello' } }] } },
      },
    });
    rid = created.body.uuid;
    const doc = Buffer.from('A stored file.\n');
    docMd5 = createHash('md5').update(doc).digest('hex');
    const uploaded = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/resource/${rid}/file/doc/upload`, {
      method: 'POST',
      headers: { [key.header]: key.value, 'content-type': 'text/plain', 'x-md5': docMd5 },
      body: new Uint8Array(doc),
    });
    expect(uploaded.status).toBe(201);
    expect(
      (await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential: key, body: { title: 'Taken', slug: 'taken' } })).status,
    ).toBe(201);
    await http.eventually(
      async () => {
        const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kbid}/resources`, {
          credential: key,
        });
        return list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      90_000,
      'the fixtures to be processed',
    );
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
    await blobs?.close();
    rmSync(blobRoot, { recursive: true, force: true });
  }, 60_000);

  const snapshot = async () => {
    const objects: string[] = [];
    for await (const item of blobs.list('')) objects.push(`${item.key} ${item.size}`);
    return {
      resources: (await http.call('GET', `/api/v1/kb/${kbid}/resources?size=200`, { credential: key })).body,
      existing: (
        await http.call('GET', `/api/v1/kb/${kbid}/resource/${rid}?show=basic&show=values&show=errors&show=extracted`, { credential: key })
      ).body,
      labelsets: (await http.call('GET', `/api/v1/kb/${kbid}/labelsets`, { credential: key })).body,
      objects: objects.sort(),
    };
  };

  const send = async (row: Row): Promise<{ status: number; body: unknown }> => {
    const url = `${http.baseUrl}/api/v1/kb/${kbid}${row.path}`;
    const headers: Record<string, string> = { [key.header]: key.value, ...(row.headers ?? {}) };
    if (row.declaredLength !== undefined)
      return announceOnly(url, row.method, { ...headers, 'content-length': String(row.declaredLength) });
    let body: string | undefined;
    if (row.raw !== undefined) body = row.raw;
    else if (row.json !== undefined) {
      body = JSON.stringify(row.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url, { method: row.method, headers, body });
    const text = await res.text();
    return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  };

  const fileWith = (file: Record<string, unknown>) => ({ file: { filename: 'f.txt', content_type: 'text/plain', ...file } });
  const rows: Row[] = [
    // Wrong types and values in JSON bodies: 422 with every invalid member located.
    {
      name: 'create: title of the wrong type',
      method: 'POST',
      path: '/resources',
      json: { title: 5 },
      status: 422,
      loc: ['body', 'title'],
    },
    {
      name: 'create: text body of the wrong type',
      method: 'POST',
      path: '/resources',
      json: { texts: { a: { body: 5 } } },
      status: 422,
      loc: ['body', 'texts', 'a', 'body'],
    },
    {
      name: 'create: unknown text format',
      method: 'POST',
      path: '/resources',
      json: { texts: { a: { body: 'x', format: 'WORD' } } },
      status: 422,
      loc: ['body', 'texts', 'a', 'format'],
    },
    {
      name: 'create: field id with a space',
      method: 'POST',
      path: '/resources',
      json: { texts: { 'bad id': { body: 'x' } } },
      status: 422,
      loc: ['body', 'texts'],
    },
    {
      name: 'create: link that is not a URL',
      method: 'POST',
      path: '/resources',
      json: { links: { l: { uri: 'not a url' } } },
      status: 422,
      loc: ['body', 'links', 'l', 'uri'],
    },
    { name: 'create: bad slug', method: 'POST', path: '/resources', json: { slug: 'bad slug!' }, status: 422, loc: ['body', 'slug'] },
    { name: 'create: a list instead of an object', method: 'POST', path: '/resources', json: [], status: 422, loc: ['body'] },
    {
      name: 'create: broken base64',
      method: 'POST',
      path: '/resources',
      json: { files: { f: fileWith({ payload: 'not base64!!' }) } },
      status: 422,
      loc: ['body', 'files', 'f', 'file', 'payload'],
    },
    {
      name: 'create: a blob of another KB',
      method: 'POST',
      path: '/resources',
      json: { files: { f: fileWith({ uri: 'blob:content/kbs/other/r/x/f/file/f/original' }) } },
      status: 422,
      loc: ['body', 'files', 'f', 'file', 'uri'],
    },
    {
      name: 'create: unsupported inline file type',
      method: 'POST',
      path: '/resources',
      json: { files: { f: { file: { filename: 'setup.exe', content_type: 'application/x-msdownload', payload: 'TVqQAA==' } } } },
      status: 415,
      detail: /Unsupported file type/,
    },
    {
      name: 'create: slug taken',
      method: 'POST',
      path: '/resources',
      json: { title: 'x', slug: 'taken' },
      status: 409,
      detail: /slug taken already exists/,
    },
    // Bodies that are not (valid) JSON.
    {
      name: 'create: malformed JSON',
      method: 'POST',
      path: '/resources',
      raw: '{"title": ',
      headers: { 'content-type': 'application/json' },
      status: 422,
      loc: ['body'],
    },
    {
      name: 'create: text/plain body',
      method: 'POST',
      path: '/resources',
      raw: '{"title": "x"}',
      headers: { 'content-type': 'text/plain' },
      status: 415,
      detail: /content type text\/plain/,
    },
    {
      name: 'modify: form body',
      method: 'PATCH',
      path: `/resource/{rid}`,
      raw: 'title=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      status: 415,
      detail: /application\/json/,
    },
    {
      name: 'create: body over the JSON limit',
      method: 'POST',
      path: '/resources',
      json: { texts: { a: { body: 'x'.repeat(JSON_LIMIT + 1) } } },
      status: 413,
      detail: /larger than the limit/,
    },
    // Resources that do not exist, and slug conflicts.
    {
      name: 'modify: slug to a taken one',
      method: 'PATCH',
      path: `/resource/{rid}`,
      json: { slug: 'taken' },
      status: 409,
      detail: /Slug already exists: taken/,
    },
    {
      name: 'modify: hidden of the wrong type',
      method: 'PATCH',
      path: `/resource/{rid}`,
      json: { hidden: 'yes' },
      status: 422,
      loc: ['body', 'hidden'],
    },
    {
      name: 'modify: unknown resource',
      method: 'PATCH',
      path: `/resource/${MISSING}`,
      json: { title: 'x' },
      status: 404,
      detail: /Resource not found/,
    },
    { name: 'modify: unknown slug', method: 'PATCH', path: '/slug/nope', json: { title: 'x' }, status: 404, detail: /Resource not found/ },
    {
      name: 'modify: unknown resource with an inline file',
      method: 'PATCH',
      path: `/resource/${MISSING}`,
      json: { files: { f: fileWith({ payload: 'aGk=' }) } },
      status: 404,
      detail: /Resource not found/,
    },
    { name: 'get: unknown resource', method: 'GET', path: `/resource/${MISSING}`, status: 404, detail: /Resource not found/ },
    { name: 'get: unknown slug', method: 'GET', path: '/slug/nope', status: 404, detail: /Resource not found/ },
    { name: 'get: unknown show value', method: 'GET', path: `/resource/{rid}?show=everything`, status: 422, loc: ['query', 'show'] },
    { name: 'list: size not a number', method: 'GET', path: '/resources?size=abc', status: 422, loc: ['query', 'size'] },
    { name: 'list: size too large', method: 'GET', path: '/resources?size=1000', status: 422, loc: ['query', 'size'] },
    { name: 'delete: unknown resource', method: 'DELETE', path: `/resource/${MISSING}`, status: 404, detail: /Resource not found/ },
    { name: 'reindex: unknown resource', method: 'POST', path: `/resource/${MISSING}/reindex`, status: 404, detail: /Resource not found/ },
    {
      name: 'reindex: flag that is not a boolean',
      method: 'POST',
      path: `/resource/{rid}/reindex?reindex_vectors=maybe`,
      status: 422,
      loc: ['query', 'reindex_vectors'],
    },
    {
      name: 'reprocess: unknown resource',
      method: 'POST',
      path: `/resource/${MISSING}/reprocess`,
      status: 404,
      detail: /Resource not found/,
    },
    // Fields: unknown types, bad ids, wrong shapes.
    { name: 'field: unknown type (read)', method: 'GET', path: `/resource/{rid}/widget/x`, status: 422, loc: ['path', 'field_type'] },
    { name: 'field: unknown type (delete)', method: 'DELETE', path: `/resource/{rid}/widget/x`, status: 422, loc: ['path', 'field_type'] },
    {
      name: 'field: unknown type (reprocess)',
      method: 'POST',
      path: `/resource/{rid}/widget/x/reprocess`,
      status: 422,
      loc: ['path', 'field_type'],
    },
    {
      name: 'field: unknown type (write)',
      method: 'PUT',
      path: `/resource/{rid}/widget/x`,
      json: { body: 'x' },
      status: 404,
      detail: /Cannot PUT/,
    },
    {
      name: 'field: bad field id',
      method: 'PUT',
      path: `/resource/{rid}/text/bad%20id`,
      json: { body: 'x' },
      status: 422,
      loc: ['path', 'field_id'],
    },
    {
      name: 'field: bad file field id',
      method: 'PUT',
      path: `/resource/{rid}/file/a.b`,
      json: fileWith({ payload: 'aGk=' }),
      status: 422,
      loc: ['path', 'field_id'],
    },
    { name: 'field: text without a body', method: 'PUT', path: `/resource/{rid}/text/t`, json: {}, status: 422, loc: ['body', 'body'] },
    {
      name: 'field: broken base64',
      method: 'PUT',
      path: `/resource/{rid}/file/f`,
      json: fileWith({ payload: '@@@' }),
      status: 422,
      loc: ['body', 'file', 'payload'],
    },
    {
      name: 'field: a blob of another resource',
      method: 'PUT',
      path: `/resource/{rid}/file/f`,
      json: fileWith({ uri: `blob:content/kbs/{kbid}/r/${MISSING}/f/file/f/original` }),
      status: 422,
      loc: ['body', 'file', 'uri'],
    },
    { name: 'field: unknown field', method: 'GET', path: `/resource/{rid}/text/nope`, status: 404, detail: /Field not found/ },
    { name: 'field: delete an unknown field', method: 'DELETE', path: `/resource/{rid}/text/nope`, status: 404, detail: /Field not found/ },
    {
      name: 'field: into an unknown resource',
      method: 'PUT',
      path: `/resource/${MISSING}/text/t`,
      json: { body: 'x' },
      status: 404,
      detail: /Resource not found/,
    },
    {
      name: 'conversation: messages not a list',
      method: 'PUT',
      path: `/resource/{rid}/conversation/chat/messages`,
      json: { ident: 'm2' },
      status: 422,
      loc: ['body'],
    },
    {
      name: 'conversation: message ident taken',
      method: 'PUT',
      path: `/resource/{rid}/conversation/chat/messages`,
      json: [{ ident: 'm1', content: { text: 'again' } }],
      status: 422,
      loc: ['body', 0, 'ident'],
    },
    {
      name: 'conversation: unknown message',
      method: 'DELETE',
      path: `/resource/{rid}/conversation/chat/messages/nope`,
      status: 404,
      detail: /Message not found/,
    },
    {
      name: 'download: unknown field',
      method: 'GET',
      path: `/resource/{rid}/file/nope/download/field`,
      status: 404,
      detail: /Field not found/,
    },
    {
      name: 'download: unknown extracted file',
      method: 'GET',
      path: `/resource/{rid}/file/doc/download/extracted/nothing`,
      status: 404,
      detail: /no extracted file/,
    },
    {
      name: 'labelset: duplicate labels',
      method: 'POST',
      path: '/labelset/dupes',
      json: { labels: [{ title: 'a' }, { title: 'A' }] },
      status: 422,
      loc: ['body', 'labels'],
    },
    // Raw uploads.
    {
      name: 'upload: unsupported type',
      method: 'POST',
      path: '/upload',
      raw: 'MZ',
      headers: { 'content-type': 'application/x-msdownload', 'x-filename': 'setup.exe' },
      status: 415,
      detail: /Unsupported file type/,
    },
    {
      name: 'upload: malformed x-md5',
      method: 'POST',
      path: '/upload',
      raw: 'hello',
      headers: { 'content-type': 'text/plain', 'x-md5': 'not-an-md5' },
      status: 422,
      loc: ['header', 'x-md5'],
    },
    {
      name: 'upload: x-md5 not matching the bytes',
      method: 'POST',
      path: '/upload',
      raw: 'hello',
      headers: { 'content-type': 'text/plain', 'x-md5': '0'.repeat(32) },
      status: 422,
      loc: ['header', 'x-md5'],
    },
    {
      name: 'upload: x-md5 already in the KB',
      method: 'POST',
      path: '/upload',
      raw: 'A stored file.\n',
      headers: { 'content-type': 'text/plain', 'x-md5': '{md5}' },
      status: 409,
      detail: /already exists/,
    },
    {
      name: 'upload: announced size over the account limit',
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': 'text/plain' },
      declaredLength: 600 * 1024 * 1024,
      status: 413,
      detail: /larger than/,
    },
    {
      name: 'upload: into an unknown resource',
      method: 'POST',
      path: `/resource/${MISSING}/file/x/upload`,
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
      status: 404,
      detail: /not found/,
    },
    {
      name: 'upload: into an unknown slug',
      method: 'POST',
      path: '/slug/nope/file/x/upload',
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
      status: 404,
      detail: /not found/,
    },
    // Malformed TUS headers.
    {
      name: 'tus: neither Upload-Length nor Upload-Defer-Length',
      method: 'POST',
      path: '/tusupload',
      status: 422,
      loc: ['header', 'upload-length'],
    },
    {
      name: 'tus: Upload-Defer-Length other than 1',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-defer-length': 'yes' },
      status: 422,
      loc: ['header', 'upload-length'],
    },
    {
      name: 'tus: Upload-Length not a number',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': 'ten' },
      status: 422,
      loc: ['header', 'upload-length'],
    },
    {
      name: 'tus: Upload-Length negative',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': '-1' },
      status: 422,
      loc: ['header', 'upload-length'],
    },
    {
      name: 'tus: Upload-Length over Tus-Max-Size',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': String(6 * 1024 ** 3) },
      status: 413,
      detail: /Tus-Max-Size/,
    },
    {
      name: 'tus: Upload-Metadata value not base64',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': '4', 'upload-metadata': 'filename not*base64' },
      status: 422,
      loc: ['header', 'upload-metadata', 'filename'],
    },
    {
      name: 'tus: Upload-Metadata malformed key',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': '4', 'upload-metadata': 'file*name YQ==' },
      status: 422,
      loc: ['header', 'upload-metadata'],
    },
    {
      name: 'tus: creation body of the wrong type',
      method: 'POST',
      path: '/tusupload',
      headers: { 'upload-length': '4' },
      json: { title: 5 },
      status: 422,
      loc: ['body', 'title'],
    },
    {
      name: 'tus: into an unknown resource',
      method: 'POST',
      path: `/resource/${MISSING}/file/x/tusupload`,
      headers: { 'upload-length': '4' },
      status: 404,
      detail: /not found/,
    },
    {
      name: 'tus: chunk for an unknown upload',
      method: 'PATCH',
      path: `/tusupload/${'a'.repeat(32)}`,
      raw: 'data',
      headers: { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      status: 404,
      detail: /Upload not found/,
    },
    {
      name: 'tus: malformed upload id',
      method: 'PATCH',
      path: '/tusupload/not-an-id',
      raw: 'data',
      headers: { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      status: 404,
      detail: /Upload not found/,
    },
    {
      name: 'tus: Upload-Offset not a number',
      method: 'PATCH',
      path: `/tusupload/${'a'.repeat(32)}`,
      raw: 'data',
      headers: { 'upload-offset': 'zero' },
      status: 422,
      loc: ['header', 'upload-offset'],
    },
    {
      name: 'tus: Upload-Offset missing',
      method: 'PATCH',
      path: `/tusupload/${'a'.repeat(32)}`,
      raw: 'data',
      status: 422,
      loc: ['header', 'upload-offset'],
    },
  ];

  it('covers every category, against a KB whose state the snapshot sees', async () => {
    const statuses = new Set(rows.map((r) => r.status));
    expect([...statuses].sort()).toEqual([404, 409, 413, 415, 422]);
    const state = await snapshot();
    expect((state.resources as { resources: unknown[] }).resources).toHaveLength(2);
    expect(state.objects).toContainEqual(expect.stringMatching(new RegExp(`^content/kbs/${kbid}/r/${rid}/f/file/doc/original \\d+$`)));
  });

  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, template) => {
    // The rows name fixtures by placeholder: they are only known once the KB is set up.
    const filled = JSON.parse(
      JSON.stringify(template).replaceAll('{rid}', rid).replaceAll('{kbid}', kbid).replaceAll('{md5}', docMd5),
    ) as Row;
    const row: Row = { ...filled, detail: template.detail };
    const before = await snapshot();
    const res = await send(row);
    expect({ name: row.name, status: res.status }).toEqual({ name: row.name, status: row.status });
    const body = res.body as { detail: unknown };
    if (row.status === 422) {
      expect(Array.isArray(body.detail)).toBe(true);
      const issues = body.detail as { loc: (string | number)[]; msg: unknown; type: unknown }[];
      expect(issues.length).toBeGreaterThan(0);
      for (const issue of issues) expect(issue).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
      expect(issues[0]?.loc.slice(0, row.loc?.length)).toEqual(row.loc);
    } else {
      expect(body).toEqual({ detail: expect.any(String) });
      if (row.detail) expect(body.detail).toMatch(row.detail);
    }
    expect(await snapshot()).toEqual(before);
  });

  // HTTP_KEEP_ALIVE_TIMEOUT_MS (default 65 s, above proxies' 60 s; Node's own is 5 s): the idle
  // connection is reused within it and closed by the service once it has passed.
  it('keeps an idle connection open for HTTP_KEEP_ALIVE_TIMEOUT_MS, then closes it', async () => {
    const url = new URL(http.baseUrl);
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    let closedAt: number | undefined;
    socket.on('data', (c: Buffer) => (received += c.toString()));
    socket.on('close', () => (closedAt = Date.now()));
    await once(socket, 'connect');
    const answers = () => (received.match(/HTTP\/1\.1 200 /g) ?? []).length;
    const ask = async () => {
      const before = answers();
      socket.write(`GET /health/live HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
      await http.eventually(async () => (answers() > before ? true : undefined), 5_000, 'the answer on the kept connection');
    };
    try {
      await ask();
      await new Promise((r) => setTimeout(r, KEEP_ALIVE_MS / 2));
      await ask(); // idle for half the timeout: the same connection answers
      const last = Date.now();
      await http.eventually(async () => (closedAt !== undefined ? true : undefined), 10_000, 'the service to close the idle connection');
      expect(closedAt! - last).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
      expect(closedAt! - last).toBeLessThan(4_000);
      expect(answers()).toBe(2);
    } finally {
      socket.destroy();
    }
  });
});

/** Sends a request's headers (announcing a body it never sends) and returns the early answer. */
function announceOnly(url: string, method: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : text });
      });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    req.flushHeaders();
  });
}
