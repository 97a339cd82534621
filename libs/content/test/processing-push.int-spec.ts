import { randomBytes } from 'node:crypto';
import {
  ContentSubjects,
  ErrorCodes,
  processingUploadKey,
  SECRET_MASK,
  type ProcessingPushResponseDto,
  type ResourceDto,
} from '@kb/contracts';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

describe('Send Data To Process (spec 4.5, content.processing.push)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000d1';
  const otherKb = '00000000-0000-4000-8000-0000000000d2';

  beforeAll(async () => {
    fx = await startSearchFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const account = 'acc-push';
  const push = (body: Record<string, unknown>, kb = kbid, accountId?: string): Promise<ProcessingPushResponseDto> =>
    fx.bus.request(ContentSubjects.processingPush, {
      actor: { user: 'pipeline', client_type: 'api' },
      body: { kbid: kb, ...body },
      ...(accountId ? { account_id: accountId } : {}),
    });
  /** What Upload Binary File leaves behind: the bytes under the account, the upload's headers as metadata. */
  const stage = async (
    text: string,
    o: { filename?: string; contentType?: string; account?: string; password?: string } = {},
  ): Promise<string> => {
    const token = randomBytes(32).toString('base64url');
    await fx.blobs.put(processingUploadKey(o.account ?? account, token), Buffer.from(text), {
      contentType: o.contentType ?? 'text/plain',
      metadata: { filename: o.filename ?? 'notes.txt', ...(o.password ? { password: o.password } : {}) },
    });
    return token;
  };
  const read = async (uri: string): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const c of (await fx.blobs.get(uri.replace(/^blob:/, ''))).body) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const stagedExists = (token: string, acc = account) => fx.blobs.exists(processingUploadKey(acc, token));
  const record = (processingId: string, kb = kbid) =>
    fx.bus.request(ContentSubjects.processingRequest, { kbids: [kb], processing_id: processingId });
  const resource = (rid: string, kb = kbid): Promise<ResourceDto> =>
    fx.bus.request(ContentSubjects.getResource, { kbid: kb, rid, show: ['basic', 'values'] });

  it('creates a resource from the pushed fields and names the job of its first field', async () => {
    const res = await push({
      title: 'Tides',
      labels: ['batch-7', 'nightly'],
      textfield: { body: { body: 'The moon causes tides.' } },
      linkfield: { page: { link: 'https://example.com/tides' } },
      webhook_config: { uri: 'https://example.com/hook' },
      learning_config: { semantic_models: ['any'] },
    });
    expect(res).toMatchObject({ queue: 'shared', uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), processing_id: expect.any(String) });
    expect(res.account_seq).toBe(res.seqid);

    const created = await resource(res.uuid);
    expect(created.title).toBe('Tides');
    expect(Object.keys(created.data?.texts ?? {})).toEqual(['body']);
    expect((created.data?.links?.['page']?.value as { uri?: string } | undefined)?.uri).toBe('https://example.com/tides');

    // One record per field, both carrying the push's labels; the response names the first (link before text).
    const records = (await fx.bus.request(ContentSubjects.processingRequests, { kbids: [kbid], limit: 100 })).results.filter(
      (r) => r.resource_id === res.uuid,
    );
    expect(records.map((r) => r.request).sort()).toEqual(['link/page', 'text/body']);
    for (const r of records) expect(r).toMatchObject({ labels: ['batch-7', 'nightly'], title: 'Tides', completed: false, scheduled: true });
    expect(await record(res.processing_id)).toMatchObject({ resource_id: res.uuid, request: 'link/page' });
  });

  it('records the understanding-API key of a push on its jobs, for usage per key', async () => {
    const key = '7d2f9a4e-1b3c-4d5e-8f60-718293a4b5c6';
    const res = await fx.bus.request(ContentSubjects.processingPush, {
      actor: { user: 'pipeline', client_type: 'api', user_type: 'nuakey', nua_key_id: key },
      body: { kbid, title: 'Keyed', textfield: { body: { body: 'Pushed by a key.' } } },
    });
    const jobs: { nua_key_id: string | null }[] = await fx.ds.query(`SELECT nua_key_id FROM content.processing_requests WHERE rid = $1`, [
      res.uuid,
    ]);
    expect(jobs).toEqual([{ nua_key_id: key }]);
    // Without a key (another credential), nothing is recorded.
    const plain = await push({ title: 'Plain', textfield: { body: { body: 'Pushed without a key.' } } });
    expect(await fx.ds.query(`SELECT nua_key_id FROM content.processing_requests WHERE rid = $1`, [plain.uuid])).toEqual([
      { nua_key_id: null },
    ]);
  });

  it('writes into the resource named by uuid (dashless or not), creating it the first time', async () => {
    const hex = '3f1c2a9e5b7d4e1f8a6b2c4d6e8f0a1b';
    const first = await push({ uuid: hex.toUpperCase(), slug: 'pushed-doc', textfield: { a: { body: 'First.' } } });
    expect(first.uuid).toBe('3f1c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b');
    const second = await push({
      uuid: hex,
      title: 'Renamed',
      genericfield: { summary: { body: 'A summary.' } },
      textfield: { b: { body: 'Second.' } },
    });
    expect(second.uuid).toBe(first.uuid);
    expect(second.seqid).toBeGreaterThan(first.seqid);
    expect(second.processing_id).not.toBe(first.processing_id);
    const both = await resource(first.uuid);
    expect(both).toMatchObject({ title: 'Renamed', summary: 'A summary.', slug: 'pushed-doc' });
    expect(Object.keys(both.data?.texts ?? {}).sort()).toEqual(['a', 'b']);
    expect(await record(second.processing_id)).toMatchObject({ request: 'text/b', labels: [] });

    // By slug when no uuid is given.
    const third = await push({ slug: 'pushed-doc', textfield: { c: { body: 'Third.' } } });
    expect(third.uuid).toBe(first.uuid);
    expect(Object.keys((await resource(first.uuid)).data?.texts ?? {}).sort()).toEqual(['a', 'b', 'c']);
  });

  it('lets two concurrent pushes to one new uuid both land in the same resource', async () => {
    const uuid = '5f1c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b';
    const [a, b] = await Promise.all([push({ uuid, textfield: { a: { body: 'A.' } } }), push({ uuid, textfield: { b: { body: 'B.' } } })]);
    expect([a.uuid, b.uuid]).toEqual([uuid, uuid]);
    expect(a.seqid).not.toBe(b.seqid);
    expect(Object.keys((await resource(uuid)).data?.texts ?? {}).sort()).toEqual(['a', 'b']);
  });

  it('refuses an id taken in another KB, a slug taken by another resource, and what it cannot process', async () => {
    const elsewhere = await push({ textfield: { a: { body: 'Other KB.' } } }, otherKb);
    await expect(push({ uuid: elsewhere.uuid, textfield: { a: { body: 'Mine?' } } })).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    await expect(resource(elsewhere.uuid)).rejects.toMatchObject({ code: ErrorCodes.RESOURCE_NOT_FOUND });

    // Created directly with a taken id (as an upload or a push names it): a 409 about the id, not a slug.
    await expect(
      fx.bus.request(ContentSubjects.createResource, { kbid, rid: elsewhere.uuid, body: { title: 'Same id' } }),
    ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT, message: `A resource with id ${elsewhere.uuid} already exists` });
    await push({ slug: 'taken', textfield: { a: { body: 'x' } } });
    await expect(push({ uuid: '4f1c2a9e5b7d4e1f8a6b2c4d6e8f0a1b', slug: 'taken', textfield: { a: { body: 'y' } } })).rejects.toMatchObject({
      code: ErrorCodes.SLUG_CONFLICT,
    });

    const before = (await fx.bus.request(ContentSubjects.processingStatus, { kbid, limit: 100 })).results.length;
    await expect(push({ filefield: { doc: 'some-token' }, textfield: { a: { body: 'x' } } }, kbid, account)).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
      details: { detail: [expect.objectContaining({ loc: ['body', 'filefield', 'doc'] })] },
    });
    await expect(push({ title: 'Nothing else' })).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    // Field maps are checked by content too, not only by the gateway.
    await expect(push({ textfield: { 'bad id!': { body: 'x' } } })).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    expect((await fx.bus.request(ContentSubjects.processingStatus, { kbid, limit: 100 })).results).toHaveLength(before);
  });
  it('moves the files named by upload tokens into the resource, and uses each token once', async () => {
    const doc = await stage('Staged report text.', { filename: 'report.txt', password: 'pw' });
    const a1 = await stage('First attachment.', { filename: 'a1.txt' });
    const a2 = await stage('Second attachment.', { filename: 'a2.txt' });
    const res = await push(
      {
        title: 'With files',
        filefield: { report: doc },
        conversationfield: {
          chat: {
            messages: [
              { ident: 'm1', content: { text: 'See attached.', attachments: [a1, a2] } },
              { ident: 'm2', content: { text: 'No files.' } },
            ],
          },
        },
      },
      kbid,
      account,
    );
    const got = await fx.bus.request(ContentSubjects.getResource, { kbid, rid: res.uuid, show: ['values'] });
    const file = got.data?.files?.['report']?.value as { file: { uri: string; filename: string; content_type: string }; password?: string };
    expect(file.file).toMatchObject({
      filename: 'report.txt',
      content_type: 'text/plain',
      uri: expect.stringMatching(new RegExp(`^blob:content/kbs/${kbid}/r/${res.uuid}/`)),
    });
    // The password reaches the stored value (processing reads it there) and is only read back masked.
    expect(file.password).toBe(SECRET_MASK);
    const row = await fx.ds.query(`SELECT value FROM content.fields WHERE rid = $1 AND field_id = 'report'`, [res.uuid]);
    expect(row[0]?.value?.password).toBe('pw');
    expect(await read(file.file.uri)).toBe('Staged report text.');
    const chat = await fx.ds.query(`SELECT value FROM content.fields WHERE rid = $1 AND field_id = 'chat'`, [res.uuid]);
    const messages = (chat[0]?.value as { messages: { content: { attachments?: { uri: string; filename: string }[] } }[] }).messages;
    expect(messages[0]?.content.attachments?.map((x) => x.filename)).toEqual(['a1.txt', 'a2.txt']);
    expect(await read(messages[0]?.content.attachments?.[1]?.uri ?? '')).toBe('Second attachment.');
    expect(messages[1]?.content.attachments ?? []).toEqual([]);
    // What the push stored is measured, by key (storage_bytes): the file's size on its value, the
    // attachments on the conversation field's record.
    const sizes = await fx.ds.query(
      `SELECT field_id, value->'file'->'size' AS size, attachments FROM content.fields WHERE rid = $1 ORDER BY field_id`,
      [res.uuid],
    );
    const keyOf = (uri: string | undefined) => (uri ?? '').replace(/^blob:/, '');
    expect(sizes).toEqual([
      {
        field_id: 'chat',
        size: null,
        attachments: {
          [keyOf(messages[0]?.content.attachments?.[0]?.uri)]: 'First attachment.'.length,
          [keyOf(messages[0]?.content.attachments?.[1]?.uri)]: 'Second attachment.'.length,
        },
      },
      { field_id: 'report', size: 'Staged report text.'.length, attachments: {} },
    ]);
    // The staged copies are gone: a token names one file and serves one push.
    for (const t of [doc, a1, a2]) expect(await stagedExists(t)).toBe(false);
    await expect(push({ filefield: { again: doc } }, kbid, account)).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
      details: { detail: [expect.objectContaining({ loc: ['body', 'filefield', 'again'] })] },
    });
    // Both fields were scheduled for processing.
    const records = (await fx.bus.request(ContentSubjects.processingRequests, { kbids: [kbid], limit: 100 })).results.filter(
      (r) => r.resource_id === res.uuid,
    );
    expect(records.map((r) => r.request).sort()).toEqual(['conversation/chat', 'file/report']);
  });

  it('refuses tokens of another account, unknown or repeated tokens, and writes nothing', async () => {
    const before = (await fx.bus.request(ContentSubjects.processingStatus, { kbid, limit: 100 })).results.length;
    const theirs = await stage('Not yours.', { account: 'acc-other' });
    const mine = await stage('Mine.');
    const bad = (body: Record<string, unknown>, acc: string | null = account) =>
      expect(push(body, kbid, acc ?? undefined)).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    await bad({ filefield: { doc: theirs } });
    await bad({ filefield: { doc: mine } }, null);
    await bad({ filefield: { a: mine, b: mine } });
    await bad({
      filefield: { doc: mine },
      conversationfield: { chat: { messages: [{ ident: 'm', content: { attachments: ['../../etc/passwd'] } }] } },
    });
    expect((await fx.bus.request(ContentSubjects.processingStatus, { kbid, limit: 100 })).results).toHaveLength(before);
    expect(await stagedExists(theirs, 'acc-other')).toBe(true);
    expect(await stagedExists(mine)).toBe(true);
  });

  it('removes the copies when the write fails, and the token stays valid for a retry', async () => {
    await push({ slug: 'occupied', textfield: { a: { body: 'x' } } });
    const token = await stage('Retry me.');
    const uuid = '6f1c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b';
    await expect(push({ uuid, slug: 'occupied', filefield: { doc: token } }, kbid, account)).rejects.toMatchObject({
      code: ErrorCodes.SLUG_CONFLICT,
    });
    const left: string[] = [];
    for await (const item of fx.blobs.list(`content/kbs/${kbid}/r/${uuid}/`)) left.push(item.key);
    expect(left).toEqual([]);
    expect(await stagedExists(token)).toBe(true);
    const ok = await push({ uuid, slug: 'free-now', filefield: { doc: token } }, kbid, account);
    expect(ok.uuid).toBe(uuid);
    expect(await stagedExists(token)).toBe(false);
  });
});
