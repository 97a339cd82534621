import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type S3rver from 's3rver';
import sharp from 'sharp';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { apiKey, type HttpClient } from './support/http-client';
import { startS3rver } from './support/s3rver';
import { startStandalone, type Topology } from './support/topologies';

/**
 * Content API over HTTP on the standalone process with the S3 blob driver against a real s3rver:
 * raw uploads, downloads with Range, inline base64 files, per-field routes, conversations, and
 * that deleting a resource removes its objects.
 */
describe('content API — standalone on S3 (s3rver)', () => {
  let s3: S3rver;
  let s3Dir: string;
  let topology: Topology;
  let http: HttpClient;
  let blobs: BlobStore;
  let kbid: string;
  let key: ReturnType<typeof apiKey>;

  beforeAll(async () => {
    s3Dir = mkdtempSync(join(tmpdir(), 'kb-e2e-s3-'));
    const started = await startS3rver(s3Dir);
    s3 = started.s3;
    const port = started.port;
    const s3Env = {
      BLOB_DRIVER: 's3',
      BLOB_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      BLOB_S3_ACCESS_KEY: 'S3RVER',
      BLOB_S3_SECRET_KEY: 'S3RVER',
      BLOB_S3_BUCKET: 'kb-e2e',
    };
    topology = await startStandalone(s3Env);
    http = topology.http;
    const boot = topology.bootstrap();
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
    blobs = await createBlobStore({
      driver: 's3',
      endPoint: '127.0.0.1',
      port,
      useSSL: false,
      accessKey: 'S3RVER',
      secretKey: 'S3RVER',
      bucket: 'kb-e2e',
    });
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await blobs?.close();
    await s3?.close();
    rmSync(s3Dir, { recursive: true, force: true });
  }, 60_000);

  const upload = (path: string, bytes: Buffer, headers: Record<string, string>) =>
    fetch(`${http.baseUrl}/api/v1/kb/${kbid}${path}`, {
      method: 'POST',
      headers: { [key.header]: key.value, ...headers },
      body: new Uint8Array(bytes),
    });
  const download = (rid: string, field: string, headers: Record<string, string> = {}) =>
    fetch(`${http.baseUrl}/api/v1/kb/${kbid}/resource/${rid}/file/${field}/download/field`, {
      headers: { [key.header]: key.value, ...headers },
    });

  it('uploads a raw file as a new resource, downloads it whole and by range, and refuses a duplicate md5', async () => {
    const bytes = Buffer.from('# Notes\n\nA markdown file, uploaded raw.\n');
    const md5 = createHash('md5').update(bytes).digest('hex');
    const res = await upload('/upload', bytes, {
      'content-type': 'application/octet-stream',
      'x-filename': Buffer.from('notes día.md').toString('base64'),
      'x-md5': md5,
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { uuid: string; seqid: number; field_id: string };
    expect(created).toEqual({ uuid: expect.any(String), seqid: expect.any(Number), field_id: expect.stringMatching(/^[0-9a-f]{32}$/) });

    const resource = await http.call<{ title: string; data: { files: Record<string, { value: { file: Record<string, unknown> } }> } }>(
      'GET',
      `/api/v1/kb/${kbid}/resource/${created.uuid}?show=basic&show=values`,
      { credential: key },
    );
    expect(resource.body.title).toBe('notes día.md');
    expect(resource.body.data.files[created.field_id]?.value.file).toMatchObject({
      filename: 'notes día.md',
      content_type: 'text/markdown',
      size: bytes.length,
      md5,
    });

    const whole = await download(created.uuid, created.field_id);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes);
    expect(whole.headers.get('content-disposition')).toContain('attachment');
    const part = await download(created.uuid, created.field_id, { Range: 'bytes=2-6' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 2-6/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).toString()).toBe(bytes.subarray(2, 7).toString());
    const tail = await download(created.uuid, created.field_id, { Range: 'bytes=-4' });
    expect(Buffer.from(await tail.arrayBuffer()).toString()).toBe(bytes.subarray(bytes.length - 4).toString());
    expect((await download(created.uuid, created.field_id, { Range: `bytes=${bytes.length + 10}-` })).status).toBe(416);

    const again = await upload('/upload', bytes, { 'content-type': 'text/markdown', 'x-md5': md5 });
    expect(again.status).toBe(409);
  });

  it('refuses unsupported types with 415, a wrong x-md5 with 422, and leaves nothing behind', async () => {
    const before = (await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources?size=200`, { credential: key })).body
      .resources.length;
    expect(
      (await upload('/upload', randomBytes(64), { 'content-type': 'application/x-msdownload', 'x-filename': 'setup.exe' })).status,
    ).toBe(415);
    expect((await upload('/upload', Buffer.from('hello'), { 'content-type': 'text/plain', 'x-md5': '0'.repeat(32) })).status).toBe(422);
    expect((await upload('/upload', Buffer.from('hello'), { 'content-type': 'text/plain', 'x-md5': 'not-an-md5' })).status).toBe(422);
    const after = (await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources?size=200`, { credential: key })).body
      .resources.length;
    expect(after).toBe(before);
    const keys: string[] = [];
    for await (const item of blobs.list(`content/kbs/${kbid}/`)) keys.push(item.key);
    expect(keys.filter((k) => k.endsWith('/original')).length).toBe(1); // only the first test's upload
  });

  it('uploads into a field of an existing resource; an unknown resource is 404', async () => {
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'Holder', slug: 'holder' },
    });
    const res = await upload('/slug/holder/file/attachment/upload', Buffer.from('col1,col2\n1,2\n'), {
      'content-type': 'text/csv',
      'x-filename': 'table.csv',
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ uuid: created.body.uuid, field_id: 'attachment' });
    expect((await download(created.body.uuid, 'attachment')).status).toBe(200);
    expect(
      (
        await upload(`/resource/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/file/x/upload`, Buffer.from('x'), {
          'content-type': 'text/plain',
        })
      ).status,
    ).toBe(404);
  });

  it('stores inline base64 files of a JSON resource and deletes every object with the resource', async () => {
    const bytes = randomBytes(3000);
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: {
        title: 'Inline',
        files: { photo: { file: { filename: 'photo.png', content_type: 'image/png', payload: bytes.toString('base64') } } },
      },
    });
    expect(created.status).toBe(201);
    expect(Buffer.from(await (await download(created.body.uuid, 'photo')).arrayBuffer())).toEqual(bytes);
    const broken = await http.call('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { files: { f: { file: { filename: 'a.pdf', payload: 'not base64!!' } } } },
    });
    expect(broken.status).toBe(422);

    expect((await http.call('DELETE', `/api/v1/kb/${kbid}/resource/${created.body.uuid}`, { credential: key })).status).toBe(204);
    await http.eventually(
      async () => {
        for await (const _item of blobs.list(`content/kbs/${kbid}/r/${created.body.uuid}/`)) return undefined;
        return true;
      },
      10_000,
      'the resource objects to be deleted',
    );
  });

  it('sets, reads and deletes single fields; appends to and deletes from a conversation', async () => {
    const { body } = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'Fields' },
    });
    const base = `/api/v1/kb/${kbid}/resource/${body.uuid}`;
    expect(
      (await http.call('PUT', `${base}/text/summary`, { credential: key, body: { body: 'Short text', format: 'MARKDOWN' } })).status,
    ).toBe(201);
    const field = await http.call<{ value: { body: string; format: string } }>('GET', `${base}/text/summary?show=value`, {
      credential: key,
    });
    expect(field.body.value).toMatchObject({ body: 'Short text', format: 'MARKDOWN' });
    expect((await http.call('PUT', `${base}/text/bad id`, { credential: key, body: { body: 'x' } })).status).toBe(422);
    expect((await http.call('GET', `${base}/widget/summary`, { credential: key })).status).toBe(422);

    const msg = (ident: string, text: string) => ({ ident, who: 'u1', content: { text } });
    expect(
      (
        await http.call('PUT', `${base}/conversation/chat`, {
          credential: key,
          body: { messages: [msg('m1', 'Hello'), msg('m2', 'Hi there')] },
        })
      ).status,
    ).toBe(201);
    expect(
      (await http.call('PUT', `${base}/conversation/chat/messages`, { credential: key, body: [msg('m3', 'How are you?')] })).status,
    ).toBe(200);
    expect((await http.call('PUT', `${base}/conversation/chat/messages`, { credential: key, body: [msg('m3', 'again')] })).status).toBe(
      422,
    );
    expect((await http.call('DELETE', `${base}/conversation/chat/messages/m2`, { credential: key })).status).toBe(204);
    const chat = await http.call<{ value: { messages: { ident: string }[]; total: number } }>(
      'GET',
      `${base}/conversation/chat?show=value&page=last`,
      { credential: key },
    );
    expect(chat.body.value.messages.map((m) => m.ident)).toEqual(['m1', 'm3']);
    expect(chat.body.value.total).toBe(2);

    const reprocess = await http.call<{ seqid: number }>('POST', `${base}/reprocess`, { credential: key });
    expect(reprocess.status).toBe(202);
    expect((await http.call('DELETE', `${base}/text/summary`, { credential: key })).status).toBe(204);
    expect((await http.call('GET', `${base}/text/summary`, { credential: key })).status).toBe(404);
  });

  it('keeps label sets and checks resource labels against them', async () => {
    const set = { title: 'Genre', kind: ['RESOURCES'], labels: [{ title: 'SciFi' }, { title: 'Poetry' }] };
    expect((await http.call('POST', `/api/v1/kb/${kbid}/labelset/genre`, { credential: key, body: set })).status).toBe(200);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kbid}/labelset/dupes`, {
          credential: key,
          body: { labels: [{ title: 'a' }, { title: 'A' }] },
        })
      ).status,
    ).toBe(422);
    const all = await http.call<{ labelsets: Record<string, { labels: { title: string }[] }> }>('GET', `/api/v1/kb/${kbid}/labelsets`, {
      credential: key,
    });
    expect(all.body.labelsets['genre']?.labels.map((l) => l.title)).toEqual(['SciFi', 'Poetry']);
    const bad = await http.call<{ detail: { loc: unknown[] }[] }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'x', usermetadata: { classifications: [{ labelset: 'genre', label: 'Horror' }] } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]?.loc).toEqual(['body', 'usermetadata', 'classifications', 0, 'label']);
    const ok = await http.call('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: {
        title: 'y',
        usermetadata: {
          classifications: [
            { labelset: 'genre', label: 'scifi' },
            { labelset: 'free', label: 'anything' },
          ],
        },
      },
    });
    expect(ok.status).toBe(201);
    expect((await http.call('DELETE', `/api/v1/kb/${kbid}/labelset/genre`, { credential: key })).status).toBe(204);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/labelset/genre`, { credential: key })).status).toBe(404);
  });

  it('resumable TUS uploads: creation with resource members, resume after a drop, wrong offsets refused, deferred length', async () => {
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const auth = { [key.header]: key.value };
    const create = (headers: Record<string, string>, body?: unknown) =>
      fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload`, {
        method: 'POST',
        headers: { ...auth, 'tus-resumable': '1.0.0', ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body ? JSON.stringify(body) : undefined,
      });
    const patch = (location: string, offset: number, bytes: Buffer, headers: Record<string, string> = {}) =>
      fetch(location, {
        method: 'PATCH',
        headers: { ...auth, 'upload-offset': String(offset), 'content-type': 'text/plain', ...headers },
        body: new Uint8Array(bytes),
      });

    const part1 = Buffer.from('First half of a resumable file. ');
    const part2 = Buffer.from('Second half, after a dropped connection.');
    const created = await create(
      {
        'upload-length': String(part1.length + part2.length),
        'upload-metadata': `filename ${b64('resumable.txt')},content_type ${b64('text/plain')}`,
      },
      { title: 'Resumable', slug: 'resumable' },
    );
    expect(created.status).toBe(201);
    const location = created.headers.get('location')!;
    expect(location).toMatch(/^http:\/\/.+\/api\/v1\/kb\/.+\/tusupload\/[0-9a-f]{32}$/);
    expect((await fetch(location, { method: 'HEAD', headers: auth })).headers.get('upload-offset')).toBe('0');

    const first = await patch(location, 0, part1);
    expect(first.status).toBe(200);
    expect(first.headers.get('upload-offset')).toBe(String(part1.length));
    // The client lost the connection: it asks where to resume, and a wrong offset is refused.
    expect((await fetch(location, { method: 'HEAD', headers: auth })).headers.get('upload-offset')).toBe(String(part1.length));
    expect((await patch(location, 0, part2)).status).toBe(409);
    const last = await patch(location, part1.length, part2);
    expect(last.status).toBe(200);
    expect(last.headers.get('tus-upload-finished')).toBe('1');
    const done = (await last.json()) as { uuid: string; field_id: string };
    const resource = await http.call<{ id: string; title: string }>('GET', `/api/v1/kb/${kbid}/slug/resumable`, { credential: key });
    expect(resource.body).toMatchObject({ id: done.uuid, title: 'Resumable' });
    expect(Buffer.from(await (await download(done.uuid, done.field_id)).arrayBuffer())).toEqual(Buffer.concat([part1, part2]));
    expect((await fetch(location, { method: 'HEAD', headers: auth })).status).toBe(404);

    const deferred = await create({ 'upload-defer-length': '1', 'upload-metadata': `filename ${b64('later.md')}` });
    const deferredLocation = deferred.headers.get('location')!;
    const chunk = Buffer.from('# Deferred length\n');
    const end = await patch(deferredLocation, 0, chunk, { 'upload-length': String(chunk.length) });
    expect(end.headers.get('tus-upload-finished')).toBe('1');

    expect((await create({})).status).toBe(422);
    expect((await create({ 'upload-length': '10', 'upload-metadata': 'filename not*base64' })).status).toBe(422);
    const info = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload`, { method: 'OPTIONS' });
    expect(info.headers.get('tus-extension')).toContain('creation-defer-length');
  });

  const waitProcessed = (rid: string) =>
    http.eventually(
      async () => {
        const r = await http.call<{ metadata: { status: string }; last_seqid: number }>('GET', `/api/v1/kb/${kbid}/resource/${rid}`, {
          credential: key,
        });
        return r.body.metadata?.status === 'PROCESSED' ? r.body : undefined;
      },
      90_000,
      `resource ${rid} to be processed`,
    );
  const fileField = (rid: string, field: string) =>
    http.call<{ value: { file: Record<string, unknown> }; extracted?: { file?: Record<string, { uri?: string }> } }>(
      'GET',
      `/api/v1/kb/${kbid}/resource/${rid}/file/${field}?show=value&show=extracted&extracted=file`,
      { credential: key },
    );
  const keysUnder = async (prefix: string) => {
    const out: string[] = [];
    for await (const item of blobs.list(prefix)) out.push(item.key);
    return out;
  };

  it('x-skip-store on every write that carries a file: processed, then the bytes are deleted and the download says why', async () => {
    const skip = { 'x-skip-store': 'true' };
    const text = (s: string) => Buffer.from(`# ${s}\n\nSent to processing only.\n`);
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const written: { rid: string; field: string }[] = [];

    const raw = (await (
      await upload('/upload', text('raw'), { 'content-type': 'text/markdown', 'x-filename': 'raw.md', ...skip })
    ).json()) as { uuid: string; field_id: string };
    written.push({ rid: raw.uuid, field: raw.field_id });

    const inline = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      headers: skip,
      body: {
        title: 'Inline skip',
        slug: 'inline-skip',
        files: { doc: { file: { filename: 'inline.md', content_type: 'text/markdown', payload: text('inline').toString('base64') } } },
      },
    });
    expect(inline.status).toBe(201);
    written.push({ rid: inline.body.uuid, field: 'doc' });

    const put = await http.call('PUT', `/api/v1/kb/${kbid}/slug/inline-skip/file/put`, {
      credential: key,
      headers: skip,
      body: { file: { filename: 'put.md', content_type: 'text/markdown', payload: text('put').toString('base64') } },
    });
    expect(put.status).toBe(201);
    written.push({ rid: inline.body.uuid, field: 'put' });

    expect(
      (
        await upload(`/resource/${inline.body.uuid}/file/field-upload/upload`, text('field upload'), {
          'content-type': 'text/markdown',
          ...skip,
        })
      ).status,
    ).toBe(201);
    written.push({ rid: inline.body.uuid, field: 'field-upload' });

    const patch = await http.call('PATCH', `/api/v1/kb/${kbid}/resource/${inline.body.uuid}`, {
      credential: key,
      headers: skip,
      body: {
        files: { patched: { file: { filename: 'p.md', content_type: 'text/markdown', payload: text('patch').toString('base64') } } },
      },
    });
    expect(patch.status).toBe(200);
    written.push({ rid: inline.body.uuid, field: 'patched' });

    const tusBytes = text('tus');
    const created = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload`, {
      method: 'POST',
      headers: {
        [key.header]: key.value,
        'tus-resumable': '1.0.0',
        'upload-length': String(tusBytes.length),
        'upload-metadata': `filename ${b64('tus.md')}`,
        ...skip,
      },
    });
    const done = await fetch(created.headers.get('location')!, {
      method: 'PATCH',
      headers: { [key.header]: key.value, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(tusBytes),
    });
    const tus = (await done.json()) as { uuid: string; field_id: string };
    written.push({ rid: tus.uuid, field: tus.field_id });

    for (const { rid, field } of written) {
      await waitProcessed(rid);
      const f = await fileField(rid, field);
      expect(f.body.value.file).toMatchObject({ content_type: expect.any(String), md5: expect.stringMatching(/^[0-9a-f]{32}$/) });
      expect(f.body.value.file['uri']).toBeUndefined();
      const res = await download(rid, field);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/not kept.*x-skip-store/);
      // Only processing's own artefacts remain under the field: no original, no unstored copy.
      await http.eventually(
        async () =>
          (await keysUnder(`content/kbs/${kbid}/r/${rid}/f/file/${field}/`)).every((k) => /\/extracted\/\d+\.json$/.test(k))
            ? true
            : undefined,
        10_000,
        'the unstored file to go',
      );
    }
    // A file named explicitly cannot be processed again; the extracted text stays searchable.
    expect(
      (await http.call('POST', `/api/v1/kb/${kbid}/resource/${raw.uuid}/file/${raw.field_id}/reprocess`, { credential: key })).status,
    ).toBe(409);
    const extracted = await http.call<{ extracted: { text: { text: string } } }>(
      'GET',
      `/api/v1/kb/${kbid}/resource/${raw.uuid}/file/${raw.field_id}?show=extracted&extracted=text`,
      { credential: key },
    );
    expect(extracted.body.extracted.text.text).toContain('Sent to processing only.');
  }, 180_000);

  it('serves extracted artefacts (an image thumbnail) with Range, also when the original was not kept; unknown ones are 404', async () => {
    const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .png()
      .toBuffer();
    const res = await upload('/upload', png, { 'content-type': 'image/png', 'x-filename': 'red.png', 'x-skip-store': 'true' });
    expect(res.status).toBe(201);
    const { uuid, field_id } = (await res.json()) as { uuid: string; field_id: string };
    await waitProcessed(uuid);
    const field = await fileField(uuid, field_id);
    // One key per write (its seqid): a job of an older write never overwrites a newer thumbnail.
    expect(field.body.extracted?.file?.['file_thumbnail']?.uri).toMatch(
      new RegExp(`^blob:content/kbs/${kbid}/r/${uuid}/f/file/${field_id}/thumbnails/\\d+$`),
    );
    expect((await download(uuid, field_id)).status).toBe(404);

    const extracted = (rid: string, name: string, headers: Record<string, string> = {}, type = 'file', by = 'resource') =>
      fetch(`${http.baseUrl}/api/v1/kb/${kbid}/${by}/${rid}/${type}/${field_id}/download/extracted/${name}`, {
        headers: { [key.header]: key.value, ...headers },
      });
    const whole = await extracted(uuid, 'thumbnail');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/jpeg');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect((await sharp(bytes).metadata()).format).toBe('jpeg');
    expect(Buffer.from(await (await extracted(uuid, 'file_thumbnail', {}, 'file', 'slug')).arrayBuffer())).toEqual(bytes);
    const part = await extracted(uuid, 'thumbnail', { Range: 'bytes=0-9' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(0, 10));

    for (const name of ['preview', 'original', 'extracted/1.json', 'generated/x.md']) {
      const missing = await extracted(uuid, name);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { detail: string }).detail).toContain('no extracted file');
    }
    expect((await extracted(uuid, 'thumbnail', {}, 'link')).status).toBe(404);
    expect((await extracted(uuid, 'thumbnail', {}, 'widget')).status).toBe(422);
    expect((await extracted(`${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, 'thumbnail')).status).toBe(404);
  }, 180_000);

  it('reindexes a resource by id or slug (204); reindex_vectors processes it again; unknown is 404, a bad flag 422', async () => {
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'Reindex', slug: 'reindex-me', texts: { body: { body: 'Tides follow the moon.' } } },
    });
    const before = await waitProcessed(created.body.uuid);
    const post = (path: string) => http.call('POST', `/api/v1/kb/${kbid}${path}`, { credential: key });
    const plain = await post(`/resource/${created.body.uuid}/reindex`);
    expect(plain.status).toBe(204);
    expect(plain.body).toBe('');
    expect((await post('/slug/reindex-me/reindex')).status).toBe(204);
    expect((await waitProcessed(created.body.uuid)).last_seqid).toBe(before.last_seqid);
    expect((await post('/slug/reindex-me/reindex?reindex_vectors=true')).status).toBe(204);
    const again = await http.eventually(
      async () => {
        const r = await waitProcessed(created.body.uuid);
        return r.last_seqid > before.last_seqid ? r : undefined;
      },
      60_000,
      'the resource to be processed again',
    );
    expect(again.metadata.status).toBe('PROCESSED');
    expect((await post(`/resource/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/reindex`)).status).toBe(404);
    const bad = await post('/slug/reindex-me/reindex?reindex_vectors=maybe');
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ detail: [expect.objectContaining({ loc: ['query', 'reindex_vectors'] })] });
  }, 120_000);

  it('accepts x-synchronous: true on every write', async () => {
    const sync = { 'x-synchronous': 'true' };
    const call = (method: string, path: string, body?: unknown) =>
      http.call(method, `/api/v1/kb/${kbid}${path}`, { credential: key, headers: sync, body });
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      headers: sync,
      body: { title: 'Sync', slug: 'sync' },
    });
    expect(created.status).toBe(201);
    const base = `/resource/${created.body.uuid}`;
    const statuses: [string, number][] = [];
    const record = async (what: string, p: Promise<{ status: number }>) => void statuses.push([what, (await p).status]);
    await record('modify', call('PATCH', base, { title: 'Sync 2' }));
    await record('modify by slug', call('PATCH', '/slug/sync', { summary: 's' }));
    await record('text field', call('PUT', `${base}/text/t`, { body: 'x' }));
    await record('link field', call('PUT', `${base}/link/l`, { uri: 'http://127.0.0.1:9/' }));
    await record(
      'file field',
      call('PUT', `${base}/file/f`, {
        file: { filename: 'f.txt', content_type: 'text/plain', payload: Buffer.from('f').toString('base64') },
      }),
    );
    await record('conversation', call('PUT', `${base}/conversation/c`, { messages: [{ ident: 'm1', content: { text: 'hi' } }] }));
    await record('append messages', call('PUT', `${base}/conversation/c/messages`, [{ ident: 'm2', content: { text: 'yo' } }]));
    await record('delete message', call('DELETE', `${base}/conversation/c/messages/m2`));
    await record('raw upload', upload('/upload', Buffer.from('sync upload'), { 'content-type': 'text/plain', ...sync }));
    await record(
      'field upload',
      upload(`${base}/file/u/upload`, Buffer.from('sync field upload'), { 'content-type': 'text/plain', ...sync }),
    );
    const tus = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}${base}/file/tus/tusupload`, {
      method: 'POST',
      headers: { [key.header]: key.value, 'upload-length': '4', ...sync },
    });
    statuses.push(['tus create', tus.status]);
    await record(
      'tus patch',
      fetch(tus.headers.get('location')!, {
        method: 'PATCH',
        headers: { [key.header]: key.value, 'upload-offset': '0', 'content-type': 'text/plain', ...sync },
        body: 'tus!',
      }),
    );
    await record('reprocess', call('POST', `${base}/reprocess`));
    await record('reprocess field', call('POST', `${base}/text/t/reprocess`));
    await record('reindex', call('POST', `${base}/reindex`));
    await record('label set', call('POST', '/labelset/sync', { labels: [{ title: 'a' }] }));
    await record('delete label set', call('DELETE', '/labelset/sync'));
    await record('delete field', call('DELETE', `${base}/text/t`));
    await record('delete', call('DELETE', base));
    expect(statuses).toEqual([
      ['modify', 200],
      ['modify by slug', 200],
      ['text field', 201],
      ['link field', 201],
      ['file field', 201],
      ['conversation', 201],
      ['append messages', 200],
      ['delete message', 204],
      ['raw upload', 201],
      ['field upload', 201],
      ['tus create', 201],
      ['tus patch', 200],
      ['reprocess', 202],
      ['reprocess field', 202],
      ['reindex', 204],
      ['label set', 200],
      ['delete label set', 204],
      ['delete field', 204],
      ['delete', 204],
    ]);
  }, 60_000);
});
