import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { pack as tarPack, type Header } from 'tar-stream';
type Headers = Partial<Header> & { name: string };
import { DEFAULT_ARCHIVE_LIMITS, parseEntryName, type ArchiveLimits } from './archive-format';
import { checkKbConfig, checkManifest, checkResource } from './archive-lines';
import { entryLines, entryText, readArchive } from './archive-reader';
import { ArchiveWriter } from './archive-writer';

const RID = '0b4b0c1e-6f1a-4c39-9f43-2a1f6f2b7d10';
const manifest = {
  format: 'kb-archive',
  version: 1,
  exported_at: '2026-01-02T03:04:05.000Z',
  source: { kbid: '6f1a0b4b-0c1e-4c39-9f43-2a1f6f2b7d10' },
};

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A gzipped tar of raw entries, written by tar-stream itself (so names the writer would never produce can be tried). */
async function rawArchive(entries: { header: Headers; body?: Buffer }[], gzip = true): Promise<Buffer> {
  const p = tarPack();
  const out = collect(Readable.from(p));
  for (const e of entries)
    await new Promise<void>((res, rej) =>
      p.entry({ ...e.header, size: e.header.size ?? e.body?.length ?? 0 }, e.body ?? Buffer.alloc(0), (err) => (err ? rej(err) : res())),
    );
  p.finalize();
  const tar = await out;
  return gzip ? gzipSync(tar) : tar;
}

const file = (name: string, body: string | Buffer) => ({ header: { name }, body: Buffer.isBuffer(body) ? body : Buffer.from(body) });

/** Reads every entry (JSON ones as text, others counted) or returns the error message. */
async function readAll(bytes: Buffer, limits: Partial<ArchiveLimits> = {}): Promise<{ entries: string[]; error?: string }> {
  const entries: string[] = [];
  try {
    for await (const entry of readArchive(Readable.from([bytes]), { ...DEFAULT_ARCHIVE_LIMITS, ...limits })) {
      if (entry.name.kind === 'resources')
        for await (const l of entryLines(entry, limits.maxLineBytes ?? 1024)) entries.push(`${entry.path}:${l.n}:${l.line}`);
      else entries.push(`${entry.path}=${(await entryText(entry)).length}`);
    }
    return { entries };
  } catch (err) {
    return { entries, error: (err as Error).message };
  }
}

describe('KB archive reader and writer', () => {
  it('reads back what the writer wrote, entry by entry and line by line', async () => {
    const w = new ArchiveWriter();
    const bytes = collect(w.output);
    await w.addJson('manifest.json', manifest);
    await w.addStream(`blobs/${RID}/f/file/doc/original`, 5, Readable.from([Buffer.from('he'), Buffer.from('llo')]));
    await w.addLines('resources/000001.jsonl', [{ a: 1 }, { b: 'two' }]);
    await w.addJson('end.json', { resources: 2, blobs: 1 });
    w.finalize();
    const read = await readAll(await bytes);
    expect(read).toEqual({
      entries: [
        'manifest.json=' + JSON.stringify(manifest).length,
        `blobs/${RID}/f/file/doc/original=5`,
        'resources/000001.jsonl:1:{"a":1}',
        'resources/000001.jsonl:2:{"b":"two"}',
        'end.json=25',
      ],
    });
  });

  it.each([
    ['../etc/passwd'],
    ['/etc/passwd'],
    [`blobs/${RID}/../../x`],
    [`blobs/${RID}/f/./x`],
    [`blobs/${RID}//x`],
    ['blobs/not-a-rid/x'],
    [`blobs/${RID}/a\\b`],
    ['resources/1.jsonl'],
    ['other.json'],
  ])('refuses the entry name %s', async (name) => {
    expect(parseEntryName(name)).toBeUndefined();
    const read = await readAll(await rawArchive([file('manifest.json', '{}'), file(name, 'x'), file('end.json', '{}')]));
    expect(read.error).toMatch(/is not allowed/);
  });

  it('refuses links and directories', async () => {
    const read = await readAll(
      await rawArchive([file('manifest.json', '{}'), { header: { name: `blobs/${RID}/x`, type: 'symlink', linkname: '/etc/passwd' } }]),
    );
    expect(read.error).toMatch(/is a symlink, not a file/);
  });

  it('refuses an entry larger than the limit from its header, before reading it', async () => {
    const read = await readAll(await rawArchive([file('manifest.json', '{}'), file(`blobs/${RID}/big`, Buffer.alloc(2048))]), {
      maxBlobBytes: 1024,
    });
    expect(read.error).toMatch(/has 2048 bytes, more than the 1024 allowed/);
    expect(read.entries).toEqual(['manifest.json=2']);
  });

  it('refuses more decompressed bytes than allowed (an archive bomb)', async () => {
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    const bomb = await rawArchive([file('manifest.json', '{}'), file(`blobs/${RID}/a`, zeros), file(`blobs/${RID}/b`, zeros)]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const read = await readAll(bomb, { maxTotalBytes: 6 * 1024 * 1024 });
    expect(read.error).toMatch(/more than 6291456 bytes once decompressed/);
  });

  it('refuses more entries than allowed', async () => {
    const read = await readAll(await rawArchive([file('manifest.json', '{}'), file(`blobs/${RID}/a`, 'a'), file(`blobs/${RID}/b`, 'b')]), {
      maxEntries: 2,
    });
    expect(read.error).toMatch(/more than 2 entries/);
  });

  it('refuses an archive that does not begin with the manifest, goes on after end.json, or stops before it', async () => {
    expect((await readAll(await rawArchive([file('kb.json', '{}')]))).error).toMatch(/must begin with manifest.json/);
    expect((await readAll(await rawArchive([file('manifest.json', '{}'), file('end.json', '{}'), file('kb.json', '{}')]))).error).toMatch(
      /follows end.json/,
    );
    expect((await readAll(await rawArchive([file('manifest.json', '{}')]))).error).toMatch(/ends before end.json/);
  });

  it('refuses bytes that are not gzip, and a truncated stream', async () => {
    expect((await readAll(Buffer.from('this is not an archive at all'))).error).toMatch(/not a gzip stream/);
    const whole = await rawArchive([file('manifest.json', '{}'), file(`blobs/${RID}/a`, Buffer.alloc(100_000, 7)), file('end.json', '{}')]);
    expect((await readAll(whole.subarray(0, whole.length - 40))).error).toBeDefined();
  });

  it('refuses a line longer than the limit without holding it', async () => {
    const long = JSON.stringify({ text: 'x'.repeat(5000) });
    const read = await readAll(
      await rawArchive([file('manifest.json', '{}'), file('resources/000001.jsonl', `{"a":1}\n${long}\n`), file('end.json', '{}')]),
      { maxLineBytes: 1024 },
    );
    expect(read.error).toMatch(/resources\/000001.jsonl line 2 is longer than 1024 bytes/);
    expect(read.entries).toContain('resources/000001.jsonl:1:{"a":1}');
  });

  it('checks the manifest version, secrets in the configuration and every member of a resource', () => {
    expect(checkManifest(manifest).version).toBe(1);
    expect(() => checkManifest({ ...manifest, version: 2 })).toThrow(/unsupported archive version 2/);
    expect(() => checkManifest({ ...manifest, format: 'zip' })).toThrow(/not a kb-archive archive/);
    expect(() => checkKbConfig({ learning_configuration: { user_keys: { openai: { key: 'sk' } } } })).toThrow(/must not carry user_keys/);
    const resource = {
      rid: RID,
      slug: 's',
      title: 't',
      summary: '',
      icon: '',
      thumbnail: '',
      metadata: {},
      usermetadata: {},
      fieldmetadata: [],
      computedmetadata: {},
      origin: {},
      extra: {},
      relations: [],
      access_groups: [],
      hidden: false,
      status: 'PROCESSED',
      created_at: '2026-01-02T03:04:05.000Z',
      modified_at: '2026-01-02T03:04:05.000Z',
      fields: [
        {
          field_type: 'text',
          field_id: 'body',
          value: { body: 'x' },
          extracted: { text: { text: 'x' } },
          status: 'PROCESSED',
          error: null,
          errors: [],
          modified_at: '2026-01-02T03:04:05.000Z',
        },
      ],
    };
    expect(checkResource(resource, 'line 1', { maxFieldsPerResource: 10 }).fields).toHaveLength(1);
    expect(() => checkResource({ ...resource, rid: '../x' }, 'line 1', { maxFieldsPerResource: 10 })).toThrow(
      /rid must be a lower-case UUID/,
    );
    expect(() =>
      checkResource({ ...resource, fields: [...resource.fields, ...resource.fields] }, 'line 1', { maxFieldsPerResource: 10 }),
    ).toThrow(/a field appears twice/);
    expect(() =>
      checkResource({ ...resource, fields: [{ ...resource.fields[0], field_id: '../x' }] }, 'line 1', { maxFieldsPerResource: 10 }),
    ).toThrow(/field_id must be/);
    // Every id the API accepts comes back in: `:` included, 250 characters at most.
    expect(
      checkResource({ ...resource, fields: [{ ...resource.fields[0], field_id: 'chapter:1' }] }, 'line 1', { maxFieldsPerResource: 10 })
        .fields,
    ).toHaveLength(1);
    expect(() =>
      checkResource({ ...resource, fields: [{ ...resource.fields[0], field_id: 'a'.repeat(251) }] }, 'line 1', {
        maxFieldsPerResource: 10,
      }),
    ).toThrow(/field_id must be/);
    expect(() => checkResource({ ...resource, created_at: 'yesterday' }, 'line 1', { maxFieldsPerResource: 10 })).toThrow(
      /created_at must be an ISO 8601 date/,
    );
  });

  it('checks keywordset and datetime values as their routes check a write', () => {
    const field = (field_type: string, value: unknown) => ({
      field_type,
      field_id: 'f',
      value,
      extracted: null,
      status: 'PENDING',
      error: null,
      errors: [],
      modified_at: '2026-01-02T03:04:05.000Z',
    });
    const resource = (f: unknown) => ({
      rid: RID,
      slug: 's',
      title: 't',
      summary: '',
      icon: '',
      thumbnail: '',
      metadata: {},
      usermetadata: {},
      fieldmetadata: [],
      computedmetadata: {},
      origin: {},
      extra: {},
      relations: [],
      access_groups: [],
      hidden: false,
      status: 'PENDING',
      created_at: '2026-01-02T03:04:05.000Z',
      modified_at: '2026-01-02T03:04:05.000Z',
      fields: [f],
    });
    const check = (f: unknown) => checkResource(resource(f), 'line 1', { maxFieldsPerResource: 10 });
    expect(check(field('keywordset', { keywords: [{ value: 'a' }] })).fields[0]?.field_type).toBe('keywordset');
    expect(check(field('datetime', { value: '2024-05-01T10:00:00.000Z' })).fields[0]?.value).toEqual({ value: '2024-05-01T10:00:00.000Z' });
    expect(() => check(field('datetime', { value: 'soon' }))).toThrow(/value\.value: Input should be a valid datetime/);
    expect(() => check(field('keywordset', { keywords: [{ value: 1 }] }))).toThrow(/value\.keywords\.0\.value/);
    expect(() => check(field('keywordset', { keywords: Array.from({ length: 1001 }, () => ({ value: 'k' })) }))).toThrow(
      /value\.keywords: List should have at most 1000 items/,
    );
    expect(() => check(field('keywords', { keywords: [] }))).toThrow(/field_type must be one of .*keywordset, datetime/);
  });
});
