import { gunzipSync, gzipSync } from 'node:zlib';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { resourceProcessed } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Status = { status: string; total: number; processed: number; retries: number; error: string | null };
type Paragraph = { score: number; score_type: string; order: number; text: string; id: string; labels: string[] };
type FindBody = {
  best_matches: string[];
  resources: Record<string, { slug?: string; title?: string; fields: Record<string, { paragraphs: Record<string, Paragraph> }> }>;
};

/** A ustar header for a regular file, written by hand so sizes and names a writer would refuse can be tried. */
function tarHeader(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, '0')}\0`,
    136,
  );
  h.fill(' ', 148, 156);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** One entry: its header, its bytes and the padding to 512. */
function tarGzEntry(name: string, body: string | Buffer): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return Buffer.concat([tarHeader(name, bytes.length), bytes, Buffer.alloc((512 - (bytes.length % 512)) % 512)]);
}

/** A gzipped tar of the entries (each padded to 512 bytes), with the two closing zero blocks. */
function tarGz(entries: [string, string | Buffer][], trailer = true): Buffer {
  const parts: Buffer[] = [];
  for (const [name, body] of entries) parts.push(tarGzEntry(name, body));
  if (trailer) parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

const manifest = (kbid: string) =>
  JSON.stringify({ format: 'kb-archive', version: 1, exported_at: new Date().toISOString(), source: { kbid } });

/**
 * Export and import of Knowledge Boxes over HTTP (standalone): a KB with text and file resources,
 * labels and synonyms exported, imported as a new KB, and /find answering the same there; bad
 * archives end in an errored import that leaves nothing behind; roles and tenants.
 */
describe('KB export and import', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let stranger: NonNullable<Credential>;
  let account: string;
  let kb: string;
  let archive: Buffer;
  let exportId: string;
  let splitId: string;
  let extractId: string;
  const run = Date.now().toString(36);
  const secret = `sk-export-secret-${run}`;
  const fileBytes = Buffer.from('Glaciers carve fjords as they slide toward the sea. Moraines mark where the ice stood.\n');

  const raw = async (
    method: string,
    path: string,
    credential: NonNullable<Credential>,
    body?: Buffer,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${http.baseUrl}${path}`, {
      method,
      headers: { [credential.header]: credential.value, ...headers },
      ...(body ? { body } : {}),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(bytes.toString('utf8')) as Record<string, unknown> };
  };
  const waitFor = (path: string, what: string) =>
    http.eventually(
      async () => {
        const s = await http.call<Status>('GET', path, { credential: pat });
        return s.body.status === 'finished' || s.body.status === 'errored' ? s.body : undefined;
      },
      120_000,
      what,
    );
  const importArchive = async (target: string, bytes: Buffer) => {
    const res = await raw('POST', `/api/v1/kb/${target}/import`, pat, bytes, { 'content-type': 'binary/octet-stream' });
    expect(res.status).toBe(200);
    const id = String(res.json()['import_id']);
    return waitFor(`/api/v1/kb/${target}/import/${id}/status`, 'the import');
  };
  const count = async (k: string) =>
    (await http.call<{ resources: number }>('GET', `/api/v1/kb/${k}/counters`, { credential: pat })).body.resources;
  const newKb = async (slug: string) =>
    (await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug } })).body.id;

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    account = boot.account.id;
    kb = await newKb(`export-src-${run}`);
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_accounts`, {
      credential: pat,
      body: { role: 'SMEMBER' },
    });
    const key = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_account/${sa.body.id}/keys`, {
      credential: pat,
      body: { expires: new Date(Date.now() + 3600_000).toISOString() },
    });
    reader = apiKey(key.body.token);
    const signup = await http.call<{ token: string }>('POST', '/api/v1/auth/signup', {
      body: { email: `stranger-${run}@example.com`, password: 'a long enough password' },
    });
    stranger = bearer(signup.body.token);

    // A provider key on the KB: it must never reach an archive.
    const config = await http.call('PATCH', `/api/v1/kb/${kb}/configuration`, {
      credential: pat,
      body: { user_keys: { openai_compatible: { key: secret, model: 'toy', url: 'https://llm.example/v1' } } },
    });
    expect([200, 204]).toContain(config.status);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/labelset/topic`, {
          credential: pat,
          body: { title: 'Topic', labels: [{ title: 'ice' }, { title: 'sea' }] },
        })
      ).status,
    ).toBe(200);
    expect(
      (await http.call('PUT', `/api/v1/kb/${kb}/custom-synonyms`, { credential: pat, body: { synonyms: { glacier: ['ice sheet'] } } }))
        .status,
    ).toBe(204);
    // Saved configurations: a search preset, a key-value schema, split and extract strategies (a field names the split one).
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/search_configurations/icy`, {
          credential: pat,
          body: { kind: 'find', config: { features: ['keyword'], top_k: 2 } },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/kv-schemas`, {
          credential: pat,
          body: { name: 'survey', fields: [{ key: 'depth', type: 'float', range: true }] },
        })
      ).status,
    ).toBeLessThan(300);
    splitId = (
      await http.call<string>('POST', `/api/v1/kb/${kb}/split_strategies`, {
        credential: pat,
        body: { name: 'wide', split: { max_paragraph: 5000 } },
      })
    ).body;
    extractId = (
      await http.call<string>('POST', `/api/v1/kb/${kb}/extract_strategies`, { credential: pat, body: { name: 'no-ocr', ocr: false } })
    ).body;
    expect(splitId).toMatch(/^[0-9a-f]{32}$/);
    expect(extractId).toMatch(/^[0-9a-f]{32}$/);
    const texts = [
      ['glaciers', 'Glaciers', 'Glaciers are rivers of ice that move slowly down valleys, grinding rock into fine flour.', 'ice'],
      ['tides', 'Tides', 'Tides rise and fall twice a day as the moon pulls the oceans of the earth.', 'sea'],
      ['deltas', 'Deltas', 'Rivers drop their sediment where they meet the sea and build wide deltas of silt.', 'sea'],
    ];
    const rids: string[] = [];
    for (const [slug, title, body, label] of texts) {
      const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
        body: {
          slug,
          title,
          texts: { body: { body, ...(slug === 'glaciers' ? { split_strategy: splitId } : {}) } },
          usermetadata: { classifications: [{ labelset: 'topic', label }] },
        },
      });
      expect(created.status).toBe(201);
      rids.push(created.body.uuid);
    }
    const upload = await raw('POST', `/api/v1/kb/${kb}/upload`, pat, fileBytes, {
      'content-type': 'text/plain',
      'x-filename': 'fjords.txt',
    });
    expect(upload.status).toBe(201);
    rids.push(String(upload.json()['uuid']));
    for (const rid of rids) await resourceProcessed(http, pat, kb, rid);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('exports the KB in the background and streams the archive', async () => {
    const started = await http.call<{ export_id: string }>('POST', `/api/v1/kb/${kb}/export`, { credential: pat });
    expect(started.status).toBe(200);
    exportId = started.body.export_id;
    const status = await waitFor(`/api/v1/kb/${kb}/export/${exportId}/status`, 'the export');
    expect(status).toEqual({ status: 'finished', total: 4, processed: 4, retries: 0, error: null });
    const download = await raw('GET', `/api/v1/kb/${kb}/export/${exportId}`, pat);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    archive = download.bytes;
    expect(archive.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // The tar's entry names (ustar headers at 512-byte boundaries), in the documented order; no secret anywhere.
    const tar = gunzipSync(archive);
    expect(tar.includes(secret)).toBe(false);
    const names: string[] = [];
    for (let at = 0; at + 512 <= tar.length;) {
      const name = tar
        .subarray(at, at + 100)
        .toString('utf8')
        .replace(/\0.*$/s, '');
      if (!name) break;
      const size = parseInt(
        tar
          .subarray(at + 124, at + 136)
          .toString('utf8')
          .replace(/\0.*$/s, '')
          .trim(),
        8,
      );
      names.push(name);
      at += 512 + Math.ceil(size / 512) * 512;
    }
    expect(names.slice(0, 6)).toEqual([
      'manifest.json',
      'kb.json',
      'labelsets.jsonl',
      'entities-groups.jsonl',
      'synonyms.json',
      'kb-configs.jsonl',
    ]);
    expect(names[6]).toBe('resources/000001.jsonl');
    expect(names.filter((n) => n.startsWith('blobs/') && n.endsWith('/original'))).toHaveLength(1);
    expect(names[names.length - 1]).toBe('end.json');
  });

  it('imports the archive as a new KB that answers /find as the original does', async () => {
    const res = await raw('POST', '/api/v1/kbs/import', pat, archive, { 'content-type': 'binary/octet-stream' });
    expect(res.status).toBe(200);
    const created = res.json() as { kbid: string; slug: string; import_id: string };
    expect(created.slug).toMatch(new RegExp(`^export-src-${run}-[0-9a-f]{8}$`));
    expect(await waitFor(`/api/v1/kb/${created.kbid}/import/${created.import_id}/status`, 'the import')).toEqual({
      status: 'finished',
      total: 4,
      processed: 4,
      retries: 0,
      error: null,
    });
    const copy = created.kbid;

    // Same slugs, labels, synonyms, counters; the file's bytes came along.
    const list = async (k: string) =>
      (
        await http.call<{ resources: { slug: string; title: string }[] }>('GET', `/api/v1/kb/${k}/resources`, { credential: pat })
      ).body.resources
        .map((r) => `${r.slug}:${r.title}`)
        .sort();
    expect(await list(copy)).toEqual(await list(kb));
    const labelsets = async (k: string) =>
      (await http.call<{ labelsets: unknown }>('GET', `/api/v1/kb/${k}/labelsets`, { credential: pat })).body.labelsets;
    expect(await labelsets(copy)).toEqual(await labelsets(kb));
    expect((await http.call('GET', `/api/v1/kb/${copy}/custom-synonyms`, { credential: pat })).body).toEqual({
      synonyms: { glacier: ['ice sheet'] },
    });
    // The saved configurations, under the same names and ids; the field still names its split strategy.
    for (const path of ['search_configurations', 'kv-schemas', 'split_strategies', 'extract_strategies']) {
      const get = async (k: string) => (await http.call('GET', `/api/v1/kb/${k}/${path}`, { credential: pat })).body;
      expect([path, await get(copy)]).toEqual([path, await get(kb)]);
    }
    expect(
      Object.keys((await http.call<Record<string, unknown>>('GET', `/api/v1/kb/${copy}/split_strategies`, { credential: pat })).body),
    ).toEqual([splitId]);
    const glaciers = await http.call<{ data: { texts: Record<string, { value: { split_strategy?: string } }> } }>(
      'GET',
      `/api/v1/kb/${copy}/slug/glaciers?show=values`,
      { credential: pat },
    );
    expect(glaciers.body.data.texts['body']?.value.split_strategy).toBe(splitId);
    const preset = await http.call<FindBody>('POST', `/api/v1/kb/${copy}/find`, {
      credential: pat,
      body: { query: 'ice', search_configuration: 'icy' },
    });
    expect(preset.status).toBe(200);
    const counters = async (k: string) => {
      const { index_size: _size, ...rest } = (
        await http.call<Record<string, number>>('GET', `/api/v1/kb/${k}/counters`, { credential: pat })
      ).body;
      return rest;
    };
    expect(await counters(copy)).toEqual(await counters(kb));
    const fileRes = (
      await http.call<{ resources: { id: string; slug: string }[] }>('GET', `/api/v1/kb/${copy}/resources`, { credential: pat })
    ).body.resources.find((r) => !['glaciers', 'tides', 'deltas'].includes(r.slug));
    const resource = await http.call<{ data: { files: Record<string, unknown> } }>(
      'GET',
      `/api/v1/kb/${copy}/resource/${fileRes?.id}?show=values`,
      { credential: pat },
    );
    const fieldId = Object.keys(resource.body.data.files)[0];
    const file = await raw('GET', `/api/v1/kb/${copy}/resource/${fileRes?.id}/file/${fieldId}/download/field`, pat);
    expect(file.status).toBe(200);
    expect(file.bytes).toEqual(fileBytes);

    // /find: the same paragraphs, scores and order, ids compared by slug (the copy's resources got new ids next to the originals).
    const normalised = (body: FindBody) => {
      const slugOf = new Map(Object.entries(body.resources).map(([rid, r]) => [rid, r.slug ?? r.title ?? rid]));
      const swap = (id: string) => id.replace(/^[0-9a-f-]{36}/, (rid) => slugOf.get(rid) ?? rid);
      const paragraphs = Object.values(body.resources).flatMap((r) => Object.values(r.fields).flatMap((f) => Object.values(f.paragraphs)));
      return {
        best: body.best_matches.map(swap),
        paragraphs: paragraphs.map((p) => ({ ...p, id: swap(p.id), score: Number(p.score.toFixed(6)) })).sort((a, b) => a.order - b.order),
      };
    };
    for (const features of [['keyword'], ['keyword', 'semantic']]) {
      for (const query of ['ice valleys', 'rivers sea sediment', 'moon oceans']) {
        const find = async (k: string) => {
          const r = await http.call<FindBody>('POST', `/api/v1/kb/${k}/find`, {
            credential: pat,
            body: { query, features, top_k: 10, min_score: { semantic: -1 } },
          });
          expect(r.status).toBe(200);
          return normalised(r.body);
        };
        const [a, b] = [await find(kb), await find(copy)];
        expect(a.best.length).toBeGreaterThan(0);
        expect(b).toEqual(a);
      }
    }
  }, 180_000);

  it('backs a KB up for its account, lists, restores into a new KB and deletes the backup', async () => {
    const created = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/backups`, { credential: pat, body: { kb_id: kb } });
    expect(created.status).toBe(201);
    type Backup = {
      id: string;
      account_id: string;
      started_at: string;
      kb_data: { id: string; slug: string; title: string; created: string };
      finished_at: string | null;
      size: number | null;
      error: string | null;
    };
    const done = await http.eventually(
      async () => {
        const list = await http.call<Backup[]>('GET', `/api/v1/account/${account}/backups`, { credential: pat });
        const mine = list.body.find((b) => b.id === created.body.id);
        return mine?.finished_at ? mine : undefined;
      },
      120_000,
      'the backup',
    );
    expect(done).toMatchObject({ account_id: account, kb_data: { id: kb, slug: `export-src-${run}` }, error: null });
    expect(done.size).toBeGreaterThan(0);

    expect(
      (
        await http.call('POST', `/api/v1/account/${account}/backup/${done.id}/restore`, {
          credential: pat,
          body: { slug: 'Not A Slug', title: 'x' },
        })
      ).status,
    ).toBe(422);
    const restored = await http.call<{ id: string; import_id: string }>('POST', `/api/v1/account/${account}/backup/${done.id}/restore`, {
      credential: pat,
      body: { slug: `restored-${run}`, title: 'Restored' },
    });
    expect(restored.status).toBe(201);
    expect(await waitFor(`/api/v1/kb/${restored.body.id}/import/${restored.body.import_id}/status`, 'the restore')).toMatchObject({
      status: 'finished',
      total: 4,
      processed: 4,
    });
    const kbRecord = await http.call<{ slug: string; title: string }>('GET', `/api/v1/kb/${restored.body.id}`, { credential: pat });
    expect([kbRecord.body.slug, kbRecord.body.title]).toEqual([`restored-${run}`, 'Restored']);
    expect(await count(restored.body.id)).toBe(4);

    // Another tenant is refused the account (as on every account route); a KB outside the account cannot be backed up.
    expect((await http.call('GET', `/api/v1/account/${account}/backups`, { credential: stranger })).status).toBe(403);
    expect(
      (
        await http.call('POST', `/api/v1/account/${account}/backup/${done.id}/restore`, {
          credential: stranger,
          body: { slug: `stolen-${run}`, title: 'x' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await http.call('POST', `/api/v1/account/${account}/backups`, {
          credential: pat,
          body: { kb_id: '6f1a0b4b-0c1e-4c39-9f43-2a1f6f2b7d10' },
        })
      ).status,
    ).toBe(404);
    expect((await http.call('DELETE', `/api/v1/account/${account}/backup/${done.id}`, { credential: pat })).status).toBe(204);
    expect(
      (await http.call<Backup[]>('GET', `/api/v1/account/${account}/backups`, { credential: pat })).body.map((b) => b.id),
    ).not.toContain(done.id);
    expect(
      (
        await http.call('POST', `/api/v1/account/${account}/backup/${done.id}/restore`, {
          credential: pat,
          body: { slug: `again-${run}`, title: 'x' },
        })
      ).status,
    ).toBe(404);
  }, 300_000);

  it("deletes an account's backups with it, records and files, those of its deleted KBs too", async () => {
    const owned = await http.call<{ id: string }>('POST', '/api/v1/accounts', {
      credential: stranger,
      body: { slug: `leaving-${run}`, title: 'Leaving' },
    });
    expect(owned.status).toBe(201);
    const gone = owned.body.id;
    const kbOf = async (slug: string) =>
      (await http.call<{ id: string }>('POST', `/api/v1/account/${gone}/kbs`, { credential: stranger, body: { slug } })).body.id;
    const kept = await kbOf(`leaving-kept-${run}`);
    const dropped = await kbOf(`leaving-dropped-${run}`);
    const backup = async (kbId: string) => {
      const started = await http.call<{ id: string }>('POST', `/api/v1/account/${gone}/backups`, {
        credential: stranger,
        body: { kb_id: kbId },
      });
      expect(started.status).toBe(201);
      return http.eventually(
        async () => {
          const list = await http.call<{ id: string; finished_at: string | null }[]>('GET', `/api/v1/account/${gone}/backups`, {
            credential: stranger,
          });
          return list.body.find((b) => b.id === started.body.id)?.finished_at ? started.body.id : undefined;
        },
        120_000,
        'the backup',
      );
    };
    const ids = [await backup(kept), await backup(dropped)];
    // A deleted KB's backup stays with the account.
    expect((await http.call('DELETE', `/api/v1/kb/${dropped}`, { credential: stranger })).status).toBe(204);
    const files = (owner = gone) => {
      const dir = join(topology.blobObjectsDir as string, 'content', 'backups', owner);
      // (the file store keeps an object as `<key>#blob`)
      return existsSync(dir)
        ? readdirSync(dir)
            .map((n) => n.replace(/#blob$/, ''))
            .sort()
        : [];
    };
    await http.eventually(async () => (files().length === 2 ? true : undefined), 30_000, 'both backup files');
    expect(files()).toEqual(ids.map((id) => `${id}.tar.gz`).sort());
    // Another account's backup is not touched.
    const other = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/backups`, { credential: pat, body: { kb_id: kb } });
    expect(other.status).toBe(201);
    await http.eventually(
      async () => (files(account).includes(`${other.body.id}.tar.gz`) ? true : undefined),
      120_000,
      "the other account's backup",
    );

    expect((await http.call('DELETE', `/api/v1/account/${gone}`, { credential: stranger })).status).toBe(204);
    await http.eventually(async () => (files().length === 0 ? true : undefined), 60_000, 'the backup files deleted');
    expect(files(account)).toContain(`${other.body.id}.tar.gz`);
    expect(
      (await http.call<{ id: string }[]>('GET', `/api/v1/account/${account}/backups`, { credential: pat })).body.map((b) => b.id),
    ).toContain(other.body.id);
    // The records went too (the route itself may still admit the caller while its cached access lasts, ACCESS_CACHE_TTL_SECONDS).
    const after = await http.call<unknown[]>('GET', `/api/v1/account/${gone}/backups`, { credential: stranger });
    expect(after.status === 200 ? after.body : []).toEqual([]);
    expect((await http.call('DELETE', `/api/v1/account/${account}/backup/${other.body.id}`, { credential: pat })).status).toBe(204);
  }, 300_000);

  it("refuses export and import to a reader (403) and answers 404 to another tenant and for another KB's jobs", async () => {
    expect((await http.call('POST', `/api/v1/kb/${kb}/export`, { credential: reader })).status).toBe(403);
    expect((await http.call('GET', `/api/v1/kb/${kb}/export/${exportId}/status`, { credential: reader })).status).toBe(403);
    expect((await raw('GET', `/api/v1/kb/${kb}/export/${exportId}`, reader)).status).toBe(403);
    expect((await raw('POST', `/api/v1/kb/${kb}/import`, reader, archive)).status).toBe(403);
    expect((await http.call('POST', `/api/v1/kb/${kb}/export`, { credential: stranger })).status).toBe(404);
    expect((await raw('GET', `/api/v1/kb/${kb}/export/${exportId}`, stranger)).status).toBe(404);
    expect((await raw('POST', `/api/v1/kb/${kb}/import`, stranger, archive)).status).toBe(404);
    const other = await newKb(`export-other-${run}`);
    expect((await http.call('GET', `/api/v1/kb/${other}/export/${exportId}/status`, { credential: pat })).status).toBe(404);
    expect((await raw('GET', `/api/v1/kb/${other}/export/${exportId}`, pat)).status).toBe(404);
    expect(await count(kb)).toBe(4);
  });

  it('ends a garbage, traversing, oversized or truncated archive in an errored import that writes nothing', async () => {
    const target = await newKb(`import-bad-${run}`);
    const src = '6f1a0b4b-0c1e-4c39-9f43-2a1f6f2b7d10';
    const rid = '0b4b0c1e-6f1a-4c39-9f43-2a1f6f2b7d10';
    const cases: [string, Buffer, RegExp][] = [
      ['garbage', Buffer.from('this is not an archive'), /not a gzip stream/],
      [
        'traversal',
        tarGz([
          ['manifest.json', manifest(src)],
          ['../../etc/passwd', 'x'],
          ['end.json', '{"resources":0,"blobs":0}'],
        ]),
        /is not allowed/,
      ],
      [
        'traversal in a blob path',
        tarGz([
          ['manifest.json', manifest(src)],
          [`blobs/${rid}/../../x`, 'x'],
          ['end.json', '{"resources":0,"blobs":0}'],
        ]),
        /is not allowed/,
      ],
      // A header claiming 8 GiB, more than the account's 5 GiB file limit: refused before any byte is read.
      [
        'oversized entry',
        gzipSync(
          Buffer.concat([tarGzEntry('manifest.json', manifest(src)), tarHeader(`blobs/${rid}/big`, 0o77777777777), Buffer.alloc(4096)]),
        ),
        /has 8589934591 bytes, more than the \d+ allowed/,
      ],
      [
        'unknown version',
        tarGz([
          [
            'manifest.json',
            JSON.stringify({ format: 'kb-archive', version: 99, exported_at: new Date().toISOString(), source: { kbid: src } }),
          ],
          ['end.json', '{"resources":0,"blobs":0}'],
        ]),
        /unsupported archive version 99/,
      ],
      [
        'truncated',
        tarGz(
          [
            ['manifest.json', manifest(src)],
            ['kb.json', '{}'],
          ],
          false,
        ),
        /ends before end.json/,
      ],
    ];
    const configs = (...lines: unknown[]): Buffer =>
      tarGz([
        ['manifest.json', manifest(src)],
        ['kb.json', '{}'],
        ['kb-configs.jsonl', lines.map((l) => JSON.stringify(l)).join('\n')],
        ['end.json', '{"resources":0,"blobs":0}'],
      ]);
    const strategyId = 'a'.repeat(32);
    cases.push(
      [
        'a bad split strategy',
        configs({ kind: 'split', id: strategyId, body: { name: 's', split: { max_paragraph: 1 } } }),
        /kb-configs.jsonl line 1/,
      ],
      ['an unknown kind', configs({ kind: 'agents', id: 'x', body: {} }), /kb-configs.jsonl line 1/],
      ['a strategy id that is a path', configs({ kind: 'extract', id: '../x', body: { name: 'e' } }), /kb-configs.jsonl line 1/],
      [
        'a schema under another id',
        configs({ kind: 'kv_schema', id: 'one', body: { name: 'other', fields: [] } }),
        /kb-configs.jsonl line 1/,
      ],
      [
        'one id twice',
        configs(
          { kind: 'search', id: 'twice', body: { kind: 'find', config: {} } },
          { kind: 'search', id: 'twice', body: { kind: 'find', config: {} } },
        ),
        /appears twice/,
      ],
      [
        'too many of a kind',
        configs(...Array.from({ length: 21 }, (_, i) => ({ kind: 'kv_schema', id: `s${i}`, body: { name: `s${i}` } }))),
        /more than 20 kv_schema/,
      ],
    );
    for (const [what, bytes, message] of cases) {
      const status = await importArchive(target, bytes);
      expect([what, status.status]).toEqual([what, 'errored']);
      expect(status.error).toMatch(message);
    }
    expect(await count(target)).toBe(0);
    for (const path of ['search_configurations', 'split_strategies', 'extract_strategies'])
      expect((await http.call('GET', `/api/v1/kb/${target}/${path}`, { credential: pat })).body).toEqual({});
    expect((await http.call('GET', `/api/v1/kb/${target}/kv-schemas`, { credential: pat })).body).toEqual({ schemas: {} });
  }, 120_000);

  it('removes what an import wrote when it fails part-way', async () => {
    const target = await newKb(`import-undo-${run}`);
    const src = '6f1a0b4b-0c1e-4c39-9f43-2a1f6f2b7d10';
    const now = new Date().toISOString();
    const resource = (rid: string, slug: string) => ({
      rid,
      slug,
      title: slug,
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
      created_at: now,
      modified_at: now,
      fields: [
        {
          field_type: 'text',
          field_id: 'body',
          value: { body: `about ${slug}`, format: 'PLAIN' },
          extracted: { text: { text: `about ${slug}` }, metadata: { metadata: { paragraphs: [{ start: 0, end: 6 + slug.length }] } } },
          status: 'PROCESSED',
          error: null,
          errors: [],
          modified_at: now,
        },
      ],
    });
    const lines = [resource('1b4b0c1e-6f1a-4c39-9f43-2a1f6f2b7d10', 'first'), resource('2b4b0c1e-6f1a-4c39-9f43-2a1f6f2b7d10', 'second')]
      .map((r) => JSON.stringify(r))
      .join('\n');
    // Label titles must be unique: the label set passes the archive's checks and fails when stored, after the resources.
    const bytes = tarGz([
      ['manifest.json', manifest(src)],
      ['kb.json', '{}'],
      ['labelsets.jsonl', JSON.stringify({ id: 'dupes', body: { labels: [{ title: 'a' }, { title: 'A' }] } })],
      ['kb-configs.jsonl', JSON.stringify({ kind: 'split', id: 'b'.repeat(32), body: { name: 'undone', split: { max_paragraph: 100 } } })],
      ['resources/000001.jsonl', lines],
      ['end.json', '{"resources":2,"blobs":0}'],
    ]);
    const status = await importArchive(target, bytes);
    expect(status.status).toBe('errored');
    expect(status.error).toMatch(/label set dupes/);
    expect(await count(target)).toBe(0);
    const find = await http.call<FindBody>('POST', `/api/v1/kb/${target}/find`, {
      credential: pat,
      body: { query: 'about', features: ['keyword'] },
    });
    expect(find.body.best_matches).toEqual([]);
    // The split strategy it wrote before its resources is removed too.
    expect((await http.call('GET', `/api/v1/kb/${target}/split_strategies`, { credential: pat })).body).toEqual({});
  }, 120_000);
});
