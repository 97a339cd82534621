import { randomUUID } from 'node:crypto';
import {
  ContentSubjects,
  extractedBlobKey,
  type AuditRecordedEvent,
  type ExtractedFieldData,
  type FieldProcessedResult,
} from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { ProcessingResultsService } from '../src/processing/processing-results.service';
import { ResourcesRepository } from '../src/resources/resources.repository';
import { TOY_VECTORSET, startSearchFixture, toyEmbed, type SearchFixture } from './fixtures/search.fixture';

/**
 * Processing results applied several to a transaction (ProcessingResultsService's batches): the
 * results that wait while one transaction runs share the next, with one outbox insert and one
 * index statement; each is applied, indexed and metered exactly once; a result that fails fails
 * alone (the batch is run again one by one); a result delivered again changes nothing.
 */
describe('processing results in batches (PGlite, in-process bus, fs blobs)', () => {
  let fx: SearchFixture;
  let results: ProcessingResultsService;
  const audit: AuditRecordedEvent[] = [];
  const kbA = '00000000-0000-4000-8000-0000000000b1';
  const kbB = '00000000-0000-4000-8000-0000000000b2';
  /** The sizes of the batches run, in order; the first batch of a test waits for `release`. */
  let sizes: number[] = [];
  let release: () => void = () => undefined;

  beforeAll(async () => {
    fx = await startSearchFixture();
    results = fx.get(ProcessingResultsService);
    await fx.bus.subscribe(ContentSubjects.auditRecorded, async (e) => void audit.push(e), { durable: 'test-batch-audit' });
    const target = results as unknown as { storeBatch: (items: unknown[]) => Promise<boolean[]> };
    const original = target.storeBatch.bind(results);
    jest.spyOn(target, 'storeBatch').mockImplementation(async (items) => {
      sizes.push(items.length);
      if (sizes.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return original(items);
    });
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
  });

  beforeEach(() => {
    sizes = [];
  });

  /** A resource with text fields, and for each field the result processing would send (not sent yet). */
  const prepare = async (kbid: string, texts: Record<string, string>): Promise<{ rid: string; results: FieldProcessedResult[] }> => {
    const { uuid: rid, seqid } = await fx.bus.request(ContentSubjects.createResource, {
      kbid,
      body: {
        title: `Title ${randomUUID().slice(0, 8)}`,
        texts: Object.fromEntries(Object.entries(texts).map(([f, body]) => [f, { body }])),
      },
    });
    const out: FieldProcessedResult[] = [];
    for (const [field, text] of Object.entries(texts)) {
      const [job] = (await fx.ds.query(`SELECT processing_id FROM content.processing_requests WHERE rid = $1 AND field_id = $2`, [
        rid,
        field,
      ])) as { processing_id: string }[];
      const ids = { processing_id: job!.processing_id, kbid, rid, field_type: 'text' as const, field_id: field, seqid };
      const data: ExtractedFieldData = {
        text: { text, split_text: {}, deleted_splits: [] },
        metadata: {
          metadata: { paragraphs: [{ start: 0, end: text.length, kind: 'TEXT', sentences: [] }], language: 'en', mime_type: 'text/plain' },
          split_metadata: {},
          deleted_splits: [],
        },
        vectors: {
          vectors: { vectors: [{ start: 0, end: text.length, start_paragraph: 0, end_paragraph: text.length, vector: toyEmbed(text) }] },
          split_vectors: {},
          deleted_splits: [],
          vectorset: TOY_VECTORSET,
          similarity: 'DOT',
          dimension: 16,
        },
      };
      const size = (await fx.blobs.put(extractedBlobKey(ids), JSON.stringify(data))).size;
      out.push({ ...ids, extracted_key: extractedBlobKey(ids), stored_bytes: { [extractedBlobKey(ids)]: size } });
    }
    return { rid, results: out };
  };

  const waiting = () => (results as unknown as { batches: { waiting: unknown[] } }).batches.waiting.length;
  /** Applies `first` alone and holds its transaction until the others wait for the next one, then lets all run. */
  const inBatch = async (first: FieldProcessedResult, rest: FieldProcessedResult[]) => {
    const head = results.apply(first);
    await eventually(async () => (sizes.length === 1 ? true : undefined), 10_000, 'the first batch started');
    const tail = rest.map((r) => results.apply(r));
    await eventually(async () => (waiting() === rest.length ? true : undefined), 10_000, 'the others waiting');
    release();
    return Promise.allSettled([head, ...tail]);
  };
  const events = (rid: string, type: string) => audit.filter((e) => e.resource_id === rid && e.type === type);
  const settledEvents = (rids: string[], type: string, n: (rid: string) => number) =>
    eventually(async () => (rids.every((rid) => events(rid, type).length === n(rid)) ? true : undefined), 10_000, `${type} events`);
  const status = async (rid: string, field: string) =>
    ((await fx.ds.query(`SELECT status FROM content.fields WHERE rid = $1 AND field_id = $2`, [rid, field])) as { status: string }[])[0]
      ?.status;
  const paragraphs = async (rid: string) =>
    ((await fx.ds.query(`SELECT field FROM content.search_paragraphs WHERE rid = $1 ORDER BY field`, [rid])) as { field: string }[]).map(
      (r) => r.field,
    );
  /** The index's statistics agree with its rows: paragraphs and lengths per KB, each term's df. */
  const indexConsistent = async () => {
    const stats = (await fx.ds.query(
      `SELECT s.kbid, s.paragraphs, s.total_length, (SELECT count(*)::int FROM content.search_paragraphs p WHERE p.kbid = s.kbid) AS n,
              (SELECT coalesce(sum(length), 0)::int FROM content.search_paragraphs p WHERE p.kbid = s.kbid) AS len
         FROM content.search_stats s WHERE s.kbid = ANY($1::uuid[])`,
      [[kbA, kbB]],
    )) as { paragraphs: number; total_length: string; n: number; len: number }[];
    for (const s of stats) expect([Number(s.paragraphs), Number(s.total_length)]).toEqual([s.n, s.len]);
    const wrongDf = (await fx.ds.query(
      `SELECT t.kbid, t.term FROM content.search_terms t
        WHERE t.kbid = ANY($1::uuid[]) AND t.df <> (SELECT count(*) FROM content.search_postings po WHERE po.kbid = t.kbid AND po.term = t.term)`,
      [[kbA, kbB]],
    )) as unknown[];
    expect(wrongDf).toEqual([]);
    const orphans = (await fx.ds.query(
      `SELECT p.id FROM content.search_paragraphs p WHERE p.kbid = ANY($1::uuid[]) AND p.field <> 'a/title'
          AND NOT EXISTS (SELECT 1 FROM content.search_vectors v WHERE v.paragraph = p.id)`,
      [[kbA, kbB]],
    )) as unknown[];
    expect(orphans).toEqual([]);
  };

  it('results waiting while a transaction runs share the next one, across KBs; each is applied, indexed and metered once', async () => {
    const made = [
      await prepare(kbA, { body: 'alpha beta gamma' }),
      ...(await Promise.all(
        ['delta epsilon', 'zeta eta theta', 'iota kappa', 'lambda mu nu'].map((t, i) => prepare(i % 2 ? kbB : kbA, { body: t })),
      )),
    ];
    const all = made.map((m) => m.results[0]!);
    const outcomes = await inBatch(all[0]!, all.slice(1));
    expect(outcomes.map((o) => o.status)).toEqual(all.map(() => 'fulfilled'));
    expect(sizes).toEqual([1, all.length - 1]);
    for (const { rid } of made) {
      expect(await status(rid, 'body')).toBe('PROCESSED');
      expect(await paragraphs(rid)).toEqual(['a/title', 't/body']);
    }
    const rids = made.map((m) => m.rid);
    await settledEvents(rids, 'processed', () => 1);
    await settledEvents(rids, 'indexed', () => 1);
    // Each event meters exactly the JSON its result stored.
    for (const {
      rid,
      results: [r],
    } of made)
      expect(events(rid, 'processed')[0]?.audit_metadata?.['bytes']).toBe(r!.stored_bytes![r!.extracted_key!]);
    await indexConsistent();
  });

  it('a result that fails fails alone; the others are applied once; delivered again, none counts twice', async () => {
    const made = await Promise.all(['one two', 'three four', 'five six', 'seven eight'].map((t) => prepare(kbA, { body: t })));
    const poisoned = made[2]!;
    const repo = fx.get(ResourcesRepository);
    const updateField = repo.updateField.bind(repo);
    const spy = jest.spyOn(repo, 'updateField').mockImplementation(async (m, field, patch) => {
      if (field.rid === poisoned.rid) throw new Error('poisoned result');
      return updateField(m, field, patch);
    });
    const all = made.map((m) => m.results[0]!);
    const outcomes = await inBatch(all[0]!, all.slice(1));
    spy.mockRestore();
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // The batch of three failed and each of its results ran alone.
    expect(sizes.slice(0, 2)).toEqual([1, 3]);
    expect(sizes.slice(2).sort()).toEqual([1, 1, 1]);
    const others = made.filter((m) => m !== poisoned).map((m) => m.rid);
    await settledEvents(others, 'processed', () => 1);
    expect(events(poisoned.rid, 'processed')).toHaveLength(0);
    expect(await status(poisoned.rid, 'body')).toBe('PENDING');
    expect(await paragraphs(poisoned.rid)).toEqual([]);

    // Every result delivered again (as after a crash before the acks): only the poisoned one is applied now.
    sizes = [];
    const again = await inBatch(all[0]!, all.slice(1));
    expect(again.map((o) => o.status)).toEqual(all.map(() => 'fulfilled'));
    expect(sizes).toEqual([1, 3]);
    await settledEvents(
      made.map((m) => m.rid),
      'processed',
      () => 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    for (const { rid } of made) {
      expect(events(rid, 'processed')).toHaveLength(1);
      expect(await paragraphs(rid)).toEqual(['a/title', 't/body']);
    }
    await indexConsistent();
  });

  it('two fields of one resource and a result twice in one batch: both fields indexed, the title once, one event per field', async () => {
    const other = await prepare(kbB, { body: 'unrelated words' });
    const two = await prepare(kbB, { a: 'first field text', b: 'second field text' });
    const [ra, rb] = two.results;
    const outcomes = await inBatch(other.results[0]!, [ra!, rb!, ra!]);
    expect(sizes).toEqual([1, 3]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : 'failed'))).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await paragraphs(two.rid)).toEqual(['a/title', 't/a', 't/b']);
    await settledEvents([two.rid], 'processed', () => 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(
      events(two.rid, 'processed')
        .map((e) => e.audit_metadata?.['field'])
        .sort(),
    ).toEqual(['text/a', 'text/b']);
    await indexConsistent();
  });
});
