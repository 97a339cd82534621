import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { apiKey, type HttpClient } from './support/http-client';
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
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir });
    const { port } = await s3.run();
    const s3Env = {
      BLOB_DRIVER: 's3', BLOB_S3_ENDPOINT: `http://127.0.0.1:${port}`, BLOB_S3_ACCESS_KEY: 'S3RVER', BLOB_S3_SECRET_KEY: 'S3RVER', BLOB_S3_BUCKET: 'kb-e2e',
    };
    topology = await startStandalone(s3Env);
    http = topology.http;
    const boot = topology.bootstrap();
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
    blobs = await createBlobStore({ driver: 's3', endPoint: '127.0.0.1', port, useSSL: false, accessKey: 'S3RVER', secretKey: 'S3RVER', bucket: 'kb-e2e' });
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await blobs?.close();
    await s3?.close();
    rmSync(s3Dir, { recursive: true, force: true });
  }, 60_000);

  const upload = (path: string, bytes: Buffer, headers: Record<string, string>) =>
    fetch(`${http.baseUrl}/api/v1/kb/${kbid}${path}`, { method: 'POST', headers: { [key.header]: key.value, ...headers }, body: new Uint8Array(bytes) });
  const download = (rid: string, field: string, headers: Record<string, string> = {}) =>
    fetch(`${http.baseUrl}/api/v1/kb/${kbid}/resource/${rid}/file/${field}/download/field`, { headers: { [key.header]: key.value, ...headers } });

  it('uploads a raw file as a new resource, downloads it whole and by range, and refuses a duplicate md5', async () => {
    const bytes = Buffer.from('# Notes\n\nA markdown file, uploaded raw.\n');
    const md5 = createHash('md5').update(bytes).digest('hex');
    const res = await upload('/upload', bytes, { 'content-type': 'application/octet-stream', 'x-filename': Buffer.from('notes día.md').toString('base64'), 'x-md5': md5 });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { uuid: string; seqid: number; field_id: string };
    expect(created).toEqual({ uuid: expect.any(String), seqid: expect.any(Number), field_id: expect.stringMatching(/^[0-9a-f]{32}$/) });

    const resource = await http.call<{ title: string; data: { files: Record<string, { value: { file: Record<string, unknown> } }> } }>(
      'GET', `/api/v1/kb/${kbid}/resource/${created.uuid}?show=basic&show=values`, { credential: key },
    );
    expect(resource.body.title).toBe('notes día.md');
    expect(resource.body.data.files[created.field_id]?.value.file).toMatchObject({ filename: 'notes día.md', content_type: 'text/markdown', size: bytes.length, md5 });

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
    const before = (await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources?size=200`, { credential: key })).body.resources.length;
    expect((await upload('/upload', randomBytes(64), { 'content-type': 'application/x-msdownload', 'x-filename': 'setup.exe' })).status).toBe(415);
    expect((await upload('/upload', Buffer.from('hello'), { 'content-type': 'text/plain', 'x-md5': '0'.repeat(32) })).status).toBe(422);
    expect((await upload('/upload', Buffer.from('hello'), { 'content-type': 'text/plain', 'x-md5': 'not-an-md5' })).status).toBe(422);
    const after = (await http.call<{ resources: unknown[] }>('GET', `/api/v1/kb/${kbid}/resources?size=200`, { credential: key })).body.resources.length;
    expect(after).toBe(before);
    const keys: string[] = [];
    for await (const item of blobs.list(`content/kbs/${kbid}/`)) keys.push(item.key);
    expect(keys.filter((k) => k.endsWith('/original')).length).toBe(1); // only the first test's upload
  });

  it('uploads into a field of an existing resource; an unknown resource is 404', async () => {
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, { credential: key, body: { title: 'Holder', slug: 'holder' } });
    const res = await upload('/slug/holder/file/attachment/upload', Buffer.from('col1,col2\n1,2\n'), { 'content-type': 'text/csv', 'x-filename': 'table.csv' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ uuid: created.body.uuid, field_id: 'attachment' });
    expect((await download(created.body.uuid, 'attachment')).status).toBe(200);
    expect((await upload(`/resource/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/file/x/upload`, Buffer.from('x'), { 'content-type': 'text/plain' })).status).toBe(404);
  });

  it('stores inline base64 files of a JSON resource and deletes every object with the resource', async () => {
    const bytes = randomBytes(3000);
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key, body: { title: 'Inline', files: { photo: { file: { filename: 'photo.png', content_type: 'image/png', payload: bytes.toString('base64') } } } },
    });
    expect(created.status).toBe(201);
    expect(Buffer.from(await (await download(created.body.uuid, 'photo')).arrayBuffer())).toEqual(bytes);
    const broken = await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential: key, body: { files: { f: { file: { filename: 'a.pdf', payload: 'not base64!!' } } } } });
    expect(broken.status).toBe(422);

    expect((await http.call('DELETE', `/api/v1/kb/${kbid}/resource/${created.body.uuid}`, { credential: key })).status).toBe(204);
    await http.eventually(async () => {
      for await (const _item of blobs.list(`content/kbs/${kbid}/r/${created.body.uuid}/`)) return undefined;
      return true;
    }, 10_000, 'the resource objects to be deleted');
  });

  it('sets, reads and deletes single fields; appends to and deletes from a conversation', async () => {
    const { body } = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, { credential: key, body: { title: 'Fields' } });
    const base = `/api/v1/kb/${kbid}/resource/${body.uuid}`;
    expect((await http.call('PUT', `${base}/text/summary`, { credential: key, body: { body: 'Short text', format: 'MARKDOWN' } })).status).toBe(201);
    const field = await http.call<{ value: { body: string; format: string } }>('GET', `${base}/text/summary?show=value`, { credential: key });
    expect(field.body.value).toMatchObject({ body: 'Short text', format: 'MARKDOWN' });
    expect((await http.call('PUT', `${base}/text/bad id`, { credential: key, body: { body: 'x' } })).status).toBe(422);
    expect((await http.call('GET', `${base}/widget/summary`, { credential: key })).status).toBe(422);

    const msg = (ident: string, text: string) => ({ ident, who: 'u1', content: { text } });
    expect((await http.call('PUT', `${base}/conversation/chat`, { credential: key, body: { messages: [msg('m1', 'Hello'), msg('m2', 'Hi there')] } })).status).toBe(201);
    expect((await http.call('PUT', `${base}/conversation/chat/messages`, { credential: key, body: [msg('m3', 'How are you?')] })).status).toBe(200);
    expect((await http.call('PUT', `${base}/conversation/chat/messages`, { credential: key, body: [msg('m3', 'again')] })).status).toBe(422);
    expect((await http.call('DELETE', `${base}/conversation/chat/messages/m2`, { credential: key })).status).toBe(204);
    const chat = await http.call<{ value: { messages: { ident: string }[]; total: number } }>('GET', `${base}/conversation/chat?show=value&page=last`, { credential: key });
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
    expect((await http.call('POST', `/api/v1/kb/${kbid}/labelset/dupes`, { credential: key, body: { labels: [{ title: 'a' }, { title: 'A' }] } })).status).toBe(422);
    const all = await http.call<{ labelsets: Record<string, { labels: { title: string }[] }> }>('GET', `/api/v1/kb/${kbid}/labelsets`, { credential: key });
    expect(all.body.labelsets['genre']?.labels.map((l) => l.title)).toEqual(['SciFi', 'Poetry']);
    const bad = await http.call<{ detail: { loc: unknown[] }[] }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key, body: { title: 'x', usermetadata: { classifications: [{ labelset: 'genre', label: 'Horror' }] } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]?.loc).toEqual(['body', 'usermetadata', 'classifications', 0, 'label']);
    const ok = await http.call('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key, body: { title: 'y', usermetadata: { classifications: [{ labelset: 'genre', label: 'scifi' }, { labelset: 'free', label: 'anything' }] } },
    });
    expect(ok.status).toBe(201);
    expect((await http.call('DELETE', `/api/v1/kb/${kbid}/labelset/genre`, { credential: key })).status).toBe(204);
    expect((await http.call('GET', `/api/v1/kb/${kbid}/labelset/genre`, { credential: key })).status).toBe(404);
  });

  it('resumable TUS uploads: creation with resource members, resume after a drop, wrong offsets refused, deferred length', async () => {
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const auth = { [key.header]: key.value };
    const create = (headers: Record<string, string>, body?: unknown) =>
      fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload`, { method: 'POST', headers: { ...auth, 'tus-resumable': '1.0.0', ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined });
    const patch = (location: string, offset: number, bytes: Buffer, headers: Record<string, string> = {}) =>
      fetch(location, { method: 'PATCH', headers: { ...auth, 'upload-offset': String(offset), 'content-type': 'text/plain', ...headers }, body: new Uint8Array(bytes) });

    const part1 = Buffer.from('First half of a resumable file. ');
    const part2 = Buffer.from('Second half, after a dropped connection.');
    const created = await create({ 'upload-length': String(part1.length + part2.length), 'upload-metadata': `filename ${b64('resumable.txt')},content_type ${b64('text/plain')}` }, { title: 'Resumable', slug: 'resumable' });
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
});
