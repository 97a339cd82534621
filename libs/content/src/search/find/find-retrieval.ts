import { Inject, Injectable } from '@nestjs/common';
import type { EmbedQueryResponse } from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../../content.tokens';
import { analyzeQuery } from '../analysis';
import { GraphService } from '../graph.service';
import type { FilterMask, KbMemoryIndex } from '../memory/kb-memory-index';
import { memoryKeywordSearch, memorySemanticSearch } from '../memory/memory-retrievers';
import { SearchMemoryService } from '../memory/search-memory.service';
import type { RetrieverHit } from '../query/fusion';
import { keywordSearch, semanticSearch, type VectorQuery } from '../query/retrievers';
import { SqlParams } from '../query/sql';
import { SearchContextService } from '../search-context.service';
import { SynonymsService } from '../synonyms.service';
import type { FindPlan } from './find-plan';

/** A plan's retrievers, on memory or SQL. */
export interface PlanRetrieval {
  /** The KB's memory index if current (read once, on first use), else undefined. */
  index(): Promise<KbMemoryIndex | undefined>;
  /**
   * The current memory index with the paragraphs the plan's filter lets through; undefined when the
   * index is not current or cannot decide the filter (modification dates, slugs: only SQL can).
   */
  masked(): Promise<{ index: KbMemoryIndex; mask: FilterMask } | undefined>;
  keyword(terms: string[], limit: number, minScore: number): Promise<RetrieverHit[]>;
  semantic(query: Omit<VectorQuery, 'population'>): Promise<RetrieverHit[]>;
}

/** What the retrievers of a /find plan found, each list best first, with what fusion needs to know. */
export interface Retrieved {
  keywordHits: RetrieverHit[];
  semanticHits: RetrieverHit[];
  graphHits: RetrieverHit[];
  /** The analysed keyword terms (highlighting uses them). */
  terms: string[];
  /** How deep each retriever looked. */
  window: number;
  /** The semantic threshold applied (the request's, else the model's). */
  minSemantic: number;
  /** The vectorset the query was embedded for ('' without semantic retrieval and no vectorset asked). */
  vectorset: string;
}

/**
 * Retrieval: the keyword, semantic and graph legs of a plan, in parallel, scored on the KB's memory
 * index when it is current, else by SQL (the same hits either way, docs/decisions/0014).
 */
@Injectable()
export class FindRetrieval {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly context: SearchContextService,
    private readonly synonyms: SynonymsService,
    private readonly graph: GraphService,
    private readonly memory: SearchMemoryService,
  ) {}

  /** Runs the plan's retrievers (in parallel): the hits of each, as deep as fusion and reranking need. */
  async retrieve(plan: FindPlan, timings: Record<string, number>, t0: number): Promise<Retrieved> {
    const wantSemantic = plan.features.includes('semantic') && (plan.vector !== undefined || plan.query.trim() !== '');
    // The query's embedding takes longest (a model call in another service): it is asked for
    // before anything else, so that the keyword leg's analysis and scoring run while it is computed.
    const embedding = wantSemantic ? this.queryVector(plan) : undefined;
    embedding?.catch(() => undefined); // awaited by the semantic leg; a failure before it is not unhandled
    const languages = await this.context.kbLanguages(plan.kbid);
    const terms = await this.keywordTerms(plan, languages);
    // Each retriever looks twice as deep as asked (at most 200), or as deep as a longer rerank window or RRF window.
    const window = Math.max(
      plan.topK,
      Math.min(2 * plan.topK, 200),
      plan.rerankWindow,
      plan.fusion.name === 'rrf' ? Math.min(plan.fusion.window, 500) : 0,
      100,
    );
    const wantKeyword = plan.features.includes('keyword') && terms.length > 0;
    let minSemantic = plan.minSemantic ?? 0;
    let vectorset = plan.vectorset ?? '';
    const scope = () => ({ kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) });
    const retrieval = this.retrieval(plan, timings, t0);
    if (wantKeyword || wantSemantic) void retrieval.index(); // the generation is read while the query is embedded
    const kw: Promise<RetrieverHit[]> = wantKeyword
      ? retrieval.keyword(terms, window, plan.minBm25).then((h) => ((timings['keyword_ms'] = Date.now() - t0), h))
      : Promise.resolve([]);
    const sem: Promise<RetrieverHit[]> = embedding
      ? (async () => {
          const q = await embedding;
          vectorset = q.vectorset;
          minSemantic = plan.minSemantic ?? q.threshold;
          timings['embed_ms'] = Date.now() - t0;
          const hits = await retrieval.semantic({
            vector: q.vector,
            vectorset: q.vectorset,
            similarity: q.similarity,
            minScore: minSemantic,
            limit: window,
          });
          timings['semantic_ms'] = Date.now() - t0;
          return hits;
        })()
      : Promise.resolve([]);
    const gr: Promise<RetrieverHit[]> =
      plan.features.includes('graph') && plan.graphQuery
        ? this.graph.paragraphHits(plan.kbid, plan.graphQuery, scope(), window).then((h) => ((timings['graph_ms'] = Date.now() - t0), h))
        : Promise.resolve([]);
    const [keywordHits, semanticHits, graphHits] = await Promise.all([kw, sem, gr]);
    return { keywordHits, semanticHits, graphHits, terms, window, minSemantic, vectorset };
  }

  /**
   * A plan's keyword and semantic retrievers, scored on the KB's memory index when it is current
   * (one read of its generation, shared by both), else by SQL. /find, /search and /suggest all
   * retrieve through it.
   */
  retrieval(plan: FindPlan, timings: Record<string, number> = {}, t0 = Date.now()): PlanRetrieval {
    const scope = () => ({ kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) });
    // Only while `where` is still the condition the filter stands for (callers such as /ask add to it).
    const memoryFilter = plan.memoryFilter && plan.memoryFilter.where === plan.where ? plan.memoryFilter : null;
    let memory: Promise<KbMemoryIndex | undefined> | undefined;
    const index = () =>
      (memory ??= this.memory.current(plan.kbid).then((idx) => {
        timings['memory_index'] = idx ? 1 : 0;
        timings['memory_filter'] = idx && memoryFilter ? 1 : 0;
        timings['generation_ms'] = Date.now() - t0;
        return idx;
      }));
    return {
      index,
      masked: async () => {
        if (!memoryFilter) return undefined;
        const idx = await index();
        return idx ? { index: idx, mask: idx.mask(memoryFilter) } : undefined;
      },
      keyword: async (terms, limit, minScore) => {
        if (terms.length === 0 || limit <= 0) return [];
        const idx = await index();
        return idx
          ? memoryKeywordSearch(this.ds.manager, idx, scope(), memoryFilter, terms, limit, minScore)
          : keywordSearch(this.ds.manager, scope(), terms, limit, minScore);
      },
      semantic: async (query) => {
        const idx = await index();
        return idx
          ? memorySemanticSearch(this.ds.manager, idx, scope(), memoryFilter, query, this.memory.exactScanMax)
          : semanticSearch(this.ds.manager, scope(), {
              ...query,
              population: await this.context.vectorPopulation(plan.kbid, query.vectorset),
            });
      },
    };
  }

  /** The plan's query vector: the request's own `vector` (DOT, no threshold), else the query embedded by the KB's model. */
  async queryVector(plan: FindPlan): Promise<EmbedQueryResponse> {
    if (plan.vector)
      return {
        vector: plan.vector,
        vectorset: plan.vectorset ?? (await this.context.defaultVectorset(plan.kbid)),
        similarity: 'DOT',
        threshold: 0,
      };
    return this.context.embedQuery(plan.kbid, plan.query, plan.vectorset, plan.signal);
  }

  /** The analysed terms of the keyword query, with the KB's synonyms when `with_synonyms` asks. */
  async keywordTerms(plan: Pick<FindPlan, 'kbid' | 'query' | 'withSynonyms'>, languages: string[]): Promise<string[]> {
    if (!plan.query.trim()) return [];
    return analyzeQuery(plan.withSynonyms ? await this.synonyms.expand(plan.kbid, plan.query) : plan.query, languages);
  }
}
