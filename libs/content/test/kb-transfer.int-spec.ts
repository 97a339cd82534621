import { randomUUID } from 'node:crypto';
import { ContentSubjects, DomainError, ErrorCodes, stagedImportKey } from '@kb/contracts';
import { KbTransfersService } from '../src/transfer/kb-transfers.service';
import { startSearchFixture, TOY_VECTORSET, type SearchFixture } from './fixtures/search.fixture';

type Row = Record<string, unknown>;

/**
 * Export and import on the real content module (PGlite, fs blob store, in-process bus), jobs run by
 * `drain`: the copy's rows and index match the source's; ids are kept when free and rewritten next
 * to their source.
 */
describe('KB export and import (int)', () => {
  let fx: SearchFixture;
  let transfers: KbTransfersService;
  const source = randomUUID();

  beforeAll(async () => {
    fx = await startSearchFixture({ transferPollMs: 0 });
    transfers = fx.get(KbTransfersService);
    await fx.bus.request(ContentSubjects.setLabelSet, { kbid: source, labelset: 'topic', body: { labels: [{ title: 'ice' }] } });
    await fx.addResource(
      source,
      { slug: 'glaciers', title: 'Glaciers', usermetadata: { classifications: [{ labelset: 'topic', label: 'ice' }] } },
      'Glaciers grind rock.\n\nIce moves down valleys.',
    );
    await fx.addResource(source, { slug: 'tides', title: 'Tides' }, 'The moon pulls the oceans.');
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  async function exportKb(kbid: string): Promise<string> {
    const { export_id } = await fx.bus.request(ContentSubjects.startKbExport, { kbid, kb_config: { slug: 'src', title: 'Source' } });
    await transfers.drain();
    expect(await fx.bus.request(ContentSubjects.kbExportStatus, { kbid, id: export_id })).toEqual({
      status: 'finished',
      total: 2,
      processed: 2,
      retries: 0,
      error: null,
    });
    return (await fx.bus.request(ContentSubjects.kbExportFile, { kbid, id: export_id })).blob_key;
  }

  async function importInto(kbid: string, archiveKey: string) {
    const importId = randomUUID();
    await fx.blobs.copy(archiveKey, stagedImportKey(importId));
    await fx.bus.request(ContentSubjects.startKbImport, { kbid, import_id: importId, max_blob_bytes: -1, size_bytes: 1000 });
    await transfers.drain();
    return fx.bus.request(ContentSubjects.kbImportStatus, { kbid, id: importId });
  }

  const rows = async (kbid: string) =>
    (await fx.ds.query(`SELECT id, slug, title, status FROM content.resources WHERE kbid = $1 ORDER BY slug`, [kbid])) as Row[];
  const paragraphs = async (kbid: string) =>
    (await fx.ds.query(
      `SELECT p.rid, r.slug, p.field, p.text, p.paragraph_id FROM content.search_paragraphs p JOIN content.resources r ON r.id = p.rid WHERE p.kbid = $1 ORDER BY r.slug, p.field, p.text`,
      [kbid],
    )) as Row[];

  it('runs at most 3 exports and imports of a KB at once: the next is 429 with try_after, accepted again once one finished', async () => {
    const kbid = randomUUID();
    const start = () => fx.bus.request(ContentSubjects.startKbExport, { kbid, kb_config: { slug: 'busy', title: 'Busy' } });
    for (let i = 0; i < 3; i++) await start();
    const refused = await start().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(DomainError);
    const err = refused as DomainError;
    expect(err.code).toBe(ErrorCodes.RATE_LIMITED);
    const tryAfter = (err.details as { try_after: number }).try_after;
    const now = Math.ceil(Date.now() / 1000);
    expect(tryAfter).toBeGreaterThan(now);
    expect(tryAfter).toBeLessThanOrEqual(now + 11);
    const jobs = (await fx.ds.query(`SELECT count(*)::int AS n FROM content.kb_transfers WHERE kbid = $1`, [kbid])) as { n: number }[];
    expect(jobs[0]?.n).toBe(3);
    await transfers.drain();
    await expect(start()).resolves.toEqual({ export_id: expect.any(String) });
    await transfers.drain();
  });

  it('holds the limit of 3 under concurrent requests: of 10 at once exactly 3 are recorded, the rest 429', async () => {
    const kbid = randomUUID();
    const start = () => fx.bus.request(ContentSubjects.startKbExport, { kbid, kb_config: { slug: 'race', title: 'Race' } });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, start));
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as DomainError);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    expect(refused.map((e) => e.code)).toEqual(Array(7).fill(ErrorCodes.RATE_LIMITED));
    const jobs = (await fx.ds.query(`SELECT count(*)::int AS n FROM content.kb_transfers WHERE kbid = $1`, [kbid])) as { n: number }[];
    expect(jobs[0]?.n).toBe(3);
    await transfers.drain();
  });

  it('copies rows, index rows and label sets next to the source, under new ids', async () => {
    const key = await exportKb(source);
    const copy = randomUUID();
    expect(await importInto(copy, key)).toMatchObject({ status: 'finished', total: 2, processed: 2 });
    const [a, b] = [await rows(source), await rows(copy)];
    expect(b.map((r) => [r['slug'], r['title'], r['status']])).toEqual(a.map((r) => [r['slug'], r['title'], r['status']]));
    expect(b.map((r) => r['id'])).not.toEqual(a.map((r) => r['id']));
    const [pa, pb] = [await paragraphs(source), await paragraphs(copy)];
    expect(pb.map((p) => [p['slug'], p['field'], p['text']])).toEqual(pa.map((p) => [p['slug'], p['field'], p['text']]));
    // Paragraph ids name the copy's resources, never the source's.
    for (const p of pb) expect(String(p['paragraph_id']).startsWith(String(p['rid']))).toBe(true);
    expect((await fx.bus.request(ContentSubjects.getLabelSet, { kbid: copy, labelset: 'topic' })).labels).toEqual([{ title: 'ice' }]);
    const find = await fx.bus.request(ContentSubjects.find, {
      kbid: copy,
      body: { query: 'valleys', features: ['keyword', 'semantic'], vectorset: TOY_VECTORSET },
    } as never);
    expect(Object.values(find.resources).map((r) => (r as { slug?: string }).slug ?? '')).toContain('glaciers');
  }, 60_000);

  it('keeps resource ids that are free (a KB moved or restored after deletion)', async () => {
    const key = await exportKb(source);
    const ids = (await rows(source)).map((r) => r['id']);
    for (const rid of ids) await fx.bus.request(ContentSubjects.deleteResource, { kbid: source, rid: String(rid) });
    const restored = randomUUID();
    expect(await importInto(restored, key)).toMatchObject({ status: 'finished' });
    expect((await rows(restored)).map((r) => r['id'])).toEqual(ids);
  }, 60_000);

  it('refuses to import slugs the KB already has, writing nothing', async () => {
    const first = randomUUID();
    await fx.addResource(first, { slug: 'one', title: 'One' }, 'First text.');
    await fx.addResource(first, { slug: 'two', title: 'Two' }, 'Second text.');
    const { export_id } = await fx.bus.request(ContentSubjects.startKbExport, { kbid: first, kb_config: {} });
    await transfers.drain();
    const key = (await fx.bus.request(ContentSubjects.kbExportFile, { kbid: first, id: export_id })).blob_key;
    const target = randomUUID();
    await fx.addResource(target, { slug: 'two', title: 'Already here' }, 'Taken.');
    const status = await importInto(target, key);
    expect(status.status).toBe('errored');
    expect(status.error).toMatch(/slug "two" already exists/);
    expect((await rows(target)).map((r) => r['title'])).toEqual(['Already here']);
  }, 60_000);
});
