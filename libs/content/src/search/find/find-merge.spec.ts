import type { ResourceDto } from '@kb/contracts';
import type { SearchContextService } from '../search-context.service';
import { FindMerge } from './find-merge';
import type { FindPlan } from './find-plan';
import { FindResults } from './find-results';
import type { Retrieved } from './find-retrieval';
import type { ParagraphRow, SearchRepository } from './search.repository';

/** Paragraph i of resource `r<i % 3>`; paragraphs 1 and 4 say the same (a duplicate within r1). */
function row(id: string): ParagraphRow {
  const i = Number(id);
  return {
    id,
    rid: `r${i % 3}`,
    field: 't/text',
    split: '',
    paragraph_id: `r${i % 3}/t/text/${i}`,
    start_offset: 0,
    end_offset: 5,
    idx: i,
    page: null,
    start_seconds: null,
    end_seconds: null,
    text: i === 1 || i === 4 ? 'same' : `text ${i}`,
    kind: 'TEXT',
    language: 'en',
    labels: [],
  };
}

const resource = (rid: string) => ({ id: rid, slug: rid, title: rid }) as unknown as ResourceDto;

/** A repository that records its reads, in the order they were started. */
function fakeRepository() {
  const calls: string[] = [];
  let failPrefetch = false;
  const repo = {
    calls,
    failPrefetchOnce: () => (failPrefetch = true),
    paragraphRows: async (ids: string[]) => {
      calls.push(`rows ${ids.join(',')}`);
      return new Map(ids.map((id) => [id, row(id)]));
    },
    resourcesOfParagraphs: async (_kbid: string, ids: string[]) => {
      calls.push(`resourcesOfParagraphs ${ids.join(',')}`);
      if (failPrefetch) {
        failPrefetch = false;
        throw new Error('connection lost');
      }
      return new Map([...new Set(ids.map((id) => row(id).rid))].map((rid) => [rid, resource(rid)]));
    },
    resources: async (_kbid: string, rids: string[]) => {
      calls.push(`resources ${rids.join(',')}`);
      return new Map(rids.map((rid) => [rid, resource(rid)]));
    },
  };
  return repo;
}

const plan = (over: Partial<FindPlan> = {}): FindPlan =>
  ({
    kbid: 'kb',
    query: 'text',
    features: ['keyword'],
    topK: 3,
    minBm25: 0,
    fusion: { name: 'rrf', k: 60, window: 100, boosting: { keyword: 1, semantic: 1 } },
    rerankWindow: 3,
    reranker: 'noop',
    withDuplicates: false,
    withSynonyms: false,
    highlight: false,
    debug: false,
    showHidden: false,
    serialization: { show: ['basic'], fieldTypeFilter: [], extracted: [] },
    where: '',
    params: undefined,
    memoryFilter: null,
    ...over,
  }) as unknown as FindPlan;

const retrieved = (ids: string[]): Retrieved => ({
  keywordHits: ids.map((id, i) => ({ id, score: 10 - i })),
  semanticHits: [],
  graphHits: [],
  terms: ['text'],
  window: 100,
  minSemantic: 0,
  vectorset: '',
});

describe('FindMerge with resources read beside the rows, and FindResults', () => {
  const context = {} as SearchContextService;

  it.each(['noop', 'predict'] as const)(
    'reads the first rows and their resources together (%s), and rendering reads only the resources still missing',
    async (reranker) => {
      const repo = fakeRepository();
      const merge = new FindMerge(repo as unknown as SearchRepository, context);
      const p = plan({ reranker });
      // 1 and 4 are duplicates in r1: the first read (top_k = 3: 0, 1, 4) leaves two, so more are read.
      const { paragraphs, resources } = await merge.merge(p, retrieved(['0', '1', '4', '5', '6', '7']), { resources: true });
      expect(paragraphs.map((x) => x.id)).toEqual(reranker === 'noop' ? ['0', '1', '5'] : expect.arrayContaining(['0', '5']));
      // The resources of the first batch were asked for before its rows, not after them.
      expect(repo.calls.slice(0, 2)).toEqual(['resourcesOfParagraphs 0,1,4', 'rows 0,1,4']);
      const body = await new FindResults(repo as unknown as SearchRepository).render({
        plan: p,
        paragraphs,
        resources,
        minScore: { semantic: 0, bm25: 0 },
        terms: [],
        timings: {},
      });
      // r0 and r1 came with the first rows; r2 (paragraph 5, read later) is read when rendering.
      expect(repo.calls.filter((c) => c.startsWith('resources '))).toEqual(['resources r2']);
      expect(Object.keys(body.resources).sort()).toEqual([...new Set(paragraphs.map((x) => x.rid))].sort());
    },
  );

  it('renders from a plain read when the read beside the rows failed, and without it when not asked', async () => {
    const repo = fakeRepository();
    repo.failPrefetchOnce();
    const merge = new FindMerge(repo as unknown as SearchRepository, context);
    const p = plan();
    const merged = await merge.merge(p, retrieved(['0', '2', '3']), { resources: true });
    const body = await new FindResults(repo as unknown as SearchRepository).render({
      plan: p,
      ...merged,
      minScore: { semantic: 0, bm25: 0 },
      terms: [],
      timings: {},
    });
    expect(repo.calls.filter((c) => c.startsWith('resources '))).toEqual(['resources r0,r2']);
    expect(Object.keys(body.resources).sort()).toEqual(['r0', 'r2']);

    const plain = fakeRepository();
    const notAsked = await new FindMerge(plain as unknown as SearchRepository, context).merge(p, retrieved(['0', '2']));
    expect(notAsked.resources).toBeUndefined();
    expect(plain.calls).toEqual(['rows 0,2']);
  });
});
