import { ContentSubjects, type ExtractedFieldData, type FindRequest } from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { startSearchFixture, toyEmbed, TOY_VECTORSET, type SearchFixture } from './fixtures/search.fixture';
import { ResourceEntity } from '../src/entities';
import { SearchIndexerService } from '../src/search/index/search-indexer.service';
import { EXACT_SCAN_MAX } from '../src/search/memory/memory-retrievers';
import { SearchMemoryService } from '../src/search/memory/search-memory.service';
import { EXACT_SCAN_LIMIT, semanticSearch } from '../src/search/query/retrievers';
import { SqlParams } from '../src/search/query/sql';

interface FindResults {
  best_matches: string[];
  metrics: Record<string, number> | null;
  resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { score: number }> }> }>;
}

const HNSW_INDEXES = `SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = 'content' AND indexname LIKE 'search_vectors_hnsw_%'`;

/** SEARCH_VECTOR_INDEX: the HNSW graph is optional; without it semantic search is exact everywhere. */
describe('vector index kinds', () => {
  const kbid = '00000000-0000-4000-8000-0000000000cc';
  const texts = [
    'The moon pulls the oceans and causes the tides.\n\nSpring tides happen at full moon.',
    'A volcano erupts when magma rises.\n\nLava flows destroyed the village.',
    'Telescopes observe the moon craters.\n\nCraters formed by old impacts.',
    'Rivers carry sediment to the sea.\n\nDeltas grow where rivers slow down.',
  ];

  async function fill(fx: SearchFixture): Promise<void> {
    for (const [i, text] of texts.entries()) await fx.addResource(kbid, { title: `Doc ${i}`, slug: `doc-${i}` }, text);
  }

  describe('none', () => {
    let fx: SearchFixture;
    beforeAll(async () => {
      fx = await startSearchFixture({ vectorIndex: 'none', searchMemory: { budgetBytes: 64 * 1024 * 1024, maxParagraphs: 1000 } });
      await fill(fx);
    }, 60_000);
    afterAll(async () => fx?.close());

    it('writes vectors without building an HNSW index', async () => {
      expect(await fx.ds.query(`SELECT count(*)::int AS n FROM content.search_vectors WHERE kbid = $1`, [kbid])).toEqual([{ n: 8 }]);
      expect(await fx.ds.query(HNSW_INDEXES)).toEqual([{ n: 0 }]);
    });

    it('answers a large vectorset in SQL by an exact scan (the same hits and scores as the small-KB path)', async () => {
      const q = {
        vector: toyEmbed('spring tides full moon craters'),
        vectorset: TOY_VECTORSET,
        similarity: 'DOT' as const,
        minScore: -1,
        limit: 20,
      };
      const scope = () => ({ kbid, where: 'p.kbid = $1', params: new SqlParams([kbid]) });
      const large = await semanticSearch(fx.ds.manager, scope(), { ...q, population: EXACT_SCAN_LIMIT + 1 });
      const exact = await semanticSearch(fx.ds.manager, scope(), { ...q, population: 1 });
      expect(large).toHaveLength(8); // every vector: a limit cutting through equal scores may keep either
      expect(large).toEqual(exact);
    });

    it('lifts the cap on exact scans in memory, and /find answers semantically from the memory index', async () => {
      expect(fx.get(SearchMemoryService).exactScanMax).toBe(Number.POSITIVE_INFINITY);
      const body: FindRequest = { query: 'moon tides', features: ['semantic'], top_k: 3, min_score: { semantic: -1 }, debug: true };
      const r = await eventually(
        async () => {
          const res = (await fx.bus.request(ContentSubjects.find, { kbid, body })) as unknown as FindResults;
          return res.metrics?.['memory_index'] === 1 ? res : undefined;
        },
        10_000,
        'the memory index answers',
      );
      expect(r.best_matches).toHaveLength(3);
    });
  });

  describe('an HNSW index created by a write that rolls back', () => {
    let fx: SearchFixture;
    beforeAll(async () => {
      fx = await startSearchFixture();
    }, 60_000);
    afterAll(async () => fx?.close());

    it('is created again by the next write', async () => {
      const text = texts[0] as string;
      const { uuid } = await fx.bus.request(ContentSubjects.createResource, {
        kbid,
        body: { title: 'Rolled back', slug: 'rolled-back', texts: { body: { body: text } } },
      });
      const resource = await fx.ds.getRepository(ResourceEntity).findOneByOrFail({ id: uuid });
      const end = text.indexOf('\n\n');
      const extracted = {
        text: { text, split_text: {}, deleted_splits: [] },
        metadata: {
          metadata: { paragraphs: [{ start: 0, end, kind: 'TEXT' }], language: 'en', mime_type: 'text/plain', ner: {}, relations: [] },
          split_metadata: {},
          deleted_splits: [],
        },
        vectors: {
          vectors: { vectors: [{ start: 0, end, start_paragraph: 0, end_paragraph: end, vector: toyEmbed(text.slice(0, end)) }] },
          split_vectors: {},
          deleted_splits: [],
          vectorset: TOY_VECTORSET,
          similarity: 'DOT',
        },
      } as unknown as ExtractedFieldData;
      const indexer = fx.get(SearchIndexerService);
      await expect(
        fx.ds.transaction(async (m) => {
          await indexer.indexField(m, resource, { fieldType: 'text', fieldId: 'body' }, extracted);
          expect(await m.query(HNSW_INDEXES)).toEqual([{ n: 1 }]);
          // a second write of the same transaction finds the index it created (and must not take it as committed)
          await indexer.indexField(m, resource, { fieldType: 'text', fieldId: 'other' }, extracted);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await fx.ds.query(HNSW_INDEXES)).toEqual([{ n: 0 }]);
      await fill(fx);
      expect(await fx.ds.query(HNSW_INDEXES)).toEqual([{ n: 1 }]);
    });
  });

  describe('hnsw (the default)', () => {
    let fx: SearchFixture;
    beforeAll(async () => {
      fx = await startSearchFixture();
      await fill(fx);
    }, 60_000);
    afterAll(async () => fx?.close());

    it('builds the vectorset its HNSW index and keeps the exact scan in memory bounded', async () => {
      expect(await fx.ds.query(HNSW_INDEXES)).toEqual([{ n: 1 }]);
      expect(fx.get(SearchMemoryService).exactScanMax).toBe(EXACT_SCAN_MAX);
    });
  });
});
