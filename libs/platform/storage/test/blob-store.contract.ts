import { Readable } from 'node:stream';
import type { BlobStore } from '../src';
import { generatedStream, md5, memoryProbe, readAll, type BlobStoreHarness } from './blob-store.harness';

const MiB = 1024 * 1024;

/**
 * Behaviour every BlobStore driver must show. Each test writes under its own prefix, so one
 * store (and one server) serves the whole suite.
 */
export function describeBlobStoreContract(name: string, setup: () => Promise<BlobStoreHarness>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let harness: BlobStoreHarness;
    let store: BlobStore;
    let counter = 0;
    const prefix = (): string => `t/${Date.now().toString(36)}-${++counter}/`;

    beforeAll(async () => {
      harness = await setup();
      store = harness.store;
    });
    afterAll(async () => {
      await harness?.teardown();
    });

    const expectNothingStored = async (key: string): Promise<void> => {
      expect(await store.stat(key)).toBeNull();
      expect(await store.exists(key)).toBe(false);
      if (harness.scratchEntries) expect(await harness.scratchEntries()).toEqual([]);
    };

    it('reports its driver and is healthy', async () => {
      expect(store.driver).toBe(name);
      expect(await store.isHealthy()).toBe(true);
    });

    it('round-trips a Buffer with content type and metadata', async () => {
      const key = `${prefix()}f/file/original`;
      const data = Buffer.from('hello, blob world');
      const metadata = { filename: 'résumé "final".pdf', 'uploaded-by': 'user-1' };
      const put = await store.put(key, data, { contentType: 'text/plain; charset=utf-8', metadata });
      expect(put).toMatchObject({ key, size: data.length, md5: md5(data), contentType: 'text/plain; charset=utf-8', metadata });

      const stat = await store.stat(key);
      expect(stat).toMatchObject({ key, size: data.length, md5: md5(data), contentType: 'text/plain; charset=utf-8', metadata });
      expect(stat?.lastModified).toBeInstanceOf(Date);
      expect(await store.exists(key)).toBe(true);

      const got = await store.get(key);
      expect(got.stat).toMatchObject({ size: data.length, contentType: 'text/plain; charset=utf-8', metadata });
      expect(got.range).toBeUndefined();
      expect(await readAll(got.body)).toEqual(data);
    });

    it('round-trips a stream and a string, defaulting the content type', async () => {
      const base = prefix();
      const source = generatedStream(300 * 1024, { chunkSize: 10_000 });
      const put = await store.put(`${base}stream`, source.stream, { metadata: { a: '1' } });
      const expected = source.md5();
      expect(put).toMatchObject({ size: 300 * 1024, md5: expected, contentType: 'application/octet-stream', metadata: { a: '1' } });
      expect(md5(await readAll((await store.get(`${base}stream`)).body))).toBe(expected);

      await store.put(`${base}text`, 'héllo');
      const text = await store.get(`${base}text`);
      expect(text.stat.size).toBe(Buffer.byteLength('héllo'));
      expect((await readAll(text.body)).toString('utf8')).toBe('héllo');
    });

    it('stores an empty object', async () => {
      const key = `${prefix()}empty`;
      expect(await store.put(key, Buffer.alloc(0))).toMatchObject({ size: 0, md5: md5('') });
      const got = await store.get(key);
      expect(got.stat.size).toBe(0);
      expect((await readAll(got.body)).length).toBe(0);
    });

    it('streams a 20 MiB upload without holding it in memory', async () => {
      const key = `${prefix()}big`;
      const probe = memoryProbe();
      let pulled = 0;
      const source = generatedStream(20 * MiB, {
        onChunk: (produced) => {
          pulled = produced;
          // Every 2 MiB: each sample runs two full collections, slow on a loaded machine.
          if ((produced / (64 * 1024)) % 32 === 0) probe.sample();
        },
      });
      const pending = store.put(key, source.stream);
      expect(pulled).toBeLessThan(20 * MiB); // put() returned before draining the source: it is pulled, not slurped
      const put = await pending;
      probe.sample();
      expect(put.size).toBe(20 * MiB);
      expect(put.md5).toBe(source.md5());
      expect(probe.peakGrowth()).toBeLessThan(15 * MiB);
      const stat = await store.stat(key);
      expect(stat?.size).toBe(20 * MiB);
    }, 180_000);

    it('serves byte ranges like HTTP Range, inclusive and clamped', async () => {
      const key = `${prefix()}digits`;
      await store.put(key, '0123456789');
      const read = async (start: number, end?: number): Promise<[string, { start: number; end: number } | undefined]> => {
        const got = await store.get(key, { range: end === undefined ? { start } : { start, end } });
        return [(await readAll(got.body)).toString(), got.range];
      };
      expect(await read(2, 5)).toEqual(['2345', { start: 2, end: 5 }]);
      expect(await read(7)).toEqual(['789', { start: 7, end: 9 }]);
      expect(await read(9, 9)).toEqual(['9', { start: 9, end: 9 }]);
      if (!harness.serverQuirks?.ignoresZeroRangeEnd) expect(await read(0, 0)).toEqual(['0', { start: 0, end: 0 }]);
      expect(await read(0, 1)).toEqual(['01', { start: 0, end: 1 }]);
      expect(await read(5, 100)).toEqual(['56789', { start: 5, end: 9 }]);
      for (const range of [{ start: 10 }, { start: 50, end: 60 }, { start: 5, end: 2 }, { start: -1 }]) {
        await expect(store.get(key, { range })).rejects.toMatchObject({ code: 'RANGE_NOT_SATISFIABLE' });
      }
      const empty = `${prefix()}empty`;
      await store.put(empty, '');
      await expect(store.get(empty, { range: { start: 0 } })).rejects.toMatchObject({ code: 'RANGE_NOT_SATISFIABLE' });
    });

    it('answers for a missing key without throwing, except get', async () => {
      const key = `${prefix()}missing`;
      expect(await store.stat(key)).toBeNull();
      expect(await store.exists(key)).toBe(false);
      await expect(store.get(key)).rejects.toMatchObject({ name: 'DomainError', code: 'NOT_FOUND' });
      await expect(store.get(key, { range: { start: 0 } })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('overwrites atomically: readers see the old object until the new one is complete', async () => {
      const key = `${prefix()}doc`;
      await store.put(key, 'old version', { contentType: 'text/plain' });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      async function* slow(): AsyncGenerator<Buffer> {
        yield Buffer.from('new ');
        await gate;
        yield Buffer.from('version');
      }
      const pending = store.put(key, Readable.from(slow()), { contentType: 'text/markdown' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const during = await store.get(key);
      expect((await readAll(during.body)).toString()).toBe('old version');
      expect(during.stat.contentType).toBe('text/plain');
      release();
      await pending;
      const after = await store.get(key);
      expect((await readAll(after.body)).toString()).toBe('new version');
      expect(after.stat.contentType).toBe('text/markdown');
    });

    it('deletes idempotently', async () => {
      const key = `${prefix()}gone`;
      await store.put(key, 'x');
      await store.delete(key);
      await store.delete(key);
      expect(await store.exists(key)).toBe(false);
    });

    it('deletes exactly the objects under a prefix', async () => {
      const base = prefix();
      const keys = ['a/b/1', 'a/b/c/2', 'a/b/c/d/3', 'a/b2/4', 'a/bc', 'a/b-x/5'].map((k) => base + k);
      for (const key of keys) await store.put(key, key);
      await expect(store.deletePrefix(`${base}a/b`)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(await store.deletePrefix(`${base}a/b/`)).toBe(3);
      const left = [];
      for await (const item of store.list(base)) left.push(item.key);
      expect(left.sort()).toEqual([`${base}a/b-x/5`, `${base}a/b2/4`, `${base}a/bc`]);
      expect(await store.deletePrefix(`${base}a/b/`)).toBe(0);
      expect(await store.deletePrefix(`${base}nothing/`)).toBe(0);
      // a key can be written again under a prefix that was deleted
      await store.put(`${base}a/b/1`, 'again');
      expect(await store.exists(`${base}a/b/1`)).toBe(true);
    });

    it('lists by plain string prefix in key order', async () => {
      const base = prefix();
      const keys = [`${base}x`, `${base}x/y`, `${base}x/y/z`, `${base}x1`, `${base}x-2`, `${base}w`];
      for (const key of keys) await store.put(key, Buffer.alloc(keys.indexOf(key) + 1));
      const listed = [];
      for await (const item of store.list(`${base}x`)) listed.push(item);
      if (harness.serverQuirks?.unorderedListing) listed.sort((a, b) => (a.key < b.key ? -1 : 1));
      expect(listed.map((i) => i.key)).toEqual([`${base}x`, `${base}x-2`, `${base}x/y`, `${base}x/y/z`, `${base}x1`]);
      expect(listed.map((i) => i.size)).toEqual([1, 5, 2, 3, 4]);
      expect(listed[0]?.lastModified).toBeInstanceOf(Date);
      const all = [];
      for await (const item of store.list(base)) all.push(item.key);
      expect(all).toHaveLength(6);
      const none = [];
      for await (const item of store.list(`${base}nope/`)) none.push(item);
      expect(none).toEqual([]);
    });

    it('copies bytes, content type and metadata', async () => {
      const base = prefix();
      await store.put(`${base}src`, 'original bytes', { contentType: 'application/pdf', metadata: { filename: 'a.pdf' } });
      await store.copy(`${base}src`, `${base}dst/copy`);
      await store.put(`${base}src`, 'changed');
      const copy = await store.get(`${base}dst/copy`);
      expect((await readAll(copy.body)).toString()).toBe('original bytes');
      expect(copy.stat).toMatchObject({ contentType: 'application/pdf', metadata: { filename: 'a.pdf' }, md5: md5('original bytes') });
      await expect(store.copy(`${base}missing`, `${base}x`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it.each([
      ['before the first part', 1 * MiB],
      ['after several MiB', 6 * MiB],
    ])('stores nothing when the source stream fails %s', async (_label, failAfter) => {
      const key = `${prefix()}broken`;
      const source = generatedStream(10 * MiB, { failAfter });
      await expect(store.put(key, source.stream)).rejects.toThrow('source failed mid-way');
      await expectNothingStored(key);
    });

    it('keeps the previous object when an overwrite fails', async () => {
      const key = `${prefix()}keep`;
      await store.put(key, 'good');
      await expect(store.put(key, generatedStream(MiB, { failAfter: 100 * 1024 }).stream)).rejects.toThrow('source failed mid-way');
      expect((await readAll((await store.get(key)).body)).toString()).toBe('good');
    });

    it('rejects uploads over maxBytes and stores nothing', async () => {
      const key = `${prefix()}huge`;
      const source = generatedStream(3 * MiB);
      await expect(store.put(key, source.stream, { maxBytes: MiB })).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      await expectNothingStored(key);
      await expect(store.put(key, Buffer.alloc(11), { maxBytes: 10 })).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      await expect(store.put(key, generatedStream(10).stream, { size: 2 * MiB, maxBytes: MiB })).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
      });
      await expectNothingStored(key);
      expect(await store.put(key, Buffer.alloc(10), { maxBytes: 10 })).toMatchObject({ size: 10 });
    });

    it('rejects a stream that does not match its declared size', async () => {
      const key = `${prefix()}sized`;
      await expect(store.put(key, generatedStream(1000).stream, { size: 999 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.put(key, generatedStream(1000).stream, { size: 1001 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expectNothingStored(key);
      expect(await store.put(key, generatedStream(1000).stream, { size: 1000 })).toMatchObject({ size: 1000 });
    });

    it.each(['../x', 'a/../../x', '/abs', 'a//b', 'a\\b', 'a/./b', '', 'a/', 'a\u0000b', 'a b', 'a#b', 'x'.repeat(1025)])(
      'rejects the invalid key %j everywhere',
      async (key) => {
        const invalid = { code: 'VALIDATION_FAILED' };
        await expect(store.put(key, 'x')).rejects.toMatchObject(invalid);
        await expect(store.get(key)).rejects.toMatchObject(invalid);
        await expect(store.stat(key)).rejects.toMatchObject(invalid);
        await expect(store.exists(key)).rejects.toMatchObject(invalid);
        await expect(store.delete(key)).rejects.toMatchObject(invalid);
        await expect(store.copy(key, 'ok/key')).rejects.toMatchObject(invalid);
        await expect(store.copy('ok/key', key)).rejects.toMatchObject(invalid);
        await expect(store.presignGet(key, { expiresInSeconds: 60 })).rejects.toMatchObject(invalid);
      },
    );

    it('rejects invalid prefixes, content types and metadata', async () => {
      await expect(store.deletePrefix('')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.deletePrefix('../')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.list('/abs')[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      const key = `${prefix()}bad-options`;
      await expect(store.put(key, 'x', { contentType: 'text/plain\r\nx-evil: 1' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.put(key, 'x', { metadata: { 'Bad Key': 'v' } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.put(key, 'x', { metadata: { 'content-type': 'v' } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.put(key, 'x', { metadata: { big: 'v'.repeat(3000) } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expectNothingStored(key);
    });

    it('presigns a GET that serves the bytes, with the download name', async () => {
      const key = `${prefix()}f/file/original`;
      const data = Buffer.from('%PDF-1.4 presigned');
      await store.put(key, data, { contentType: 'application/pdf' });
      const url = await store.presignGet(key, { expiresInSeconds: 300, filename: 'report ü.pdf' });
      const opened = await harness.openPresigned(url);
      expect(opened.status).toBe(200);
      expect(opened.body).toEqual(data);
      expect(opened.contentDisposition).toContain("filename*=UTF-8''report%20%C3%BC.pdf");
      await expect(store.presignGet(key, { expiresInSeconds: 0 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(store.presignGet(key, { expiresInSeconds: 8 * 24 * 3600 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    });
  });
}
