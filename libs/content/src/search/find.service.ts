import { Inject, Injectable } from '@nestjs/common';
import { relationsSearch, type RelationsResult } from './query/relations';
import { SynonymsService } from './synonyms.service';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import {
  rephrasePromptIssues,
  type ActorDto,
  type EmbedQueryResponse,
  type FindParagraph,
  type FindResource,
  type FindResponse,
  type ResourceDto,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FieldEntity } from '../entities/field.entity';
import { ResourceEntity } from '../entities/resource.entity';
import { serializeResource } from '../resources/resource-reader.service';
import { analyzeQuery, tokenize } from './analysis';
import { PARAGRAPH_TARGET, FilterCompiler, readSecurityGroups, securityCondition } from './query/filters';
import { fuseGraph, rrf, weightedFusion, type FusedHit, type RetrieverHit, type ScoreType } from './query/fusion';
import { readSerialization, RequestReader, type SerializationOptions } from './query/request-reader';
import { LexicalReranker, NOOP_RERANKER, type Reranker } from './query/rerank';
import { keywordSearch, semanticSearch, type VectorQuery } from './query/retrievers';
import { SqlParams } from './query/sql';
import { SearchContextService } from './search-context.service';
import { GraphService, parseGraphQuery, type GraphExpr } from './graph.service';
import type { FilterMask, KbMemoryIndex, MemoryFilter } from './memory/kb-memory-index';
import { memoryKeywordSearch, memorySemanticSearch } from './memory/memory-retrievers';
import { AuditBatchService } from '../audit/audit-batch.service';
import { SearchMemoryService } from './memory/search-memory.service';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { QueryRephraser } from '../ask/query-rephraser.service';

export const FIND_FEATURES = ['keyword', 'semantic', 'relations', 'graph'] as const;
type Feature = 'keyword' | 'semantic' | 'relations' | 'graph';

/**
 * Default fusion per semantic model when the request names none (docs/decisions/0012). Weak
 * models get a small weight in score fusion so hybrid never falls below keyword alone; unknown
 * (presumably strong, configured) models get equal-weight RRF. The built-in model's weight was
 * fitted on SciFact *train* (nDCG@10: 0.05 → 0.704, 0.1 → 0.705, 0.2 → 0.706, keyword 0.702);
 * these are within 0.002, and the middle of that band was kept: less semantic influence is safer
 * on collections the model knows nothing about (docs/benchmarks.md).
 */
const DEFAULT_FUSION: Record<string, { weight: number }> = {
  'en-use-lite-2024': { weight: 0.1 },
};

export interface RetrievalRequest {
  kbid: string;
  body: unknown;
  /** Groups that replace the body's (temporal keys with groups, on /ask only). */
  forced_groups?: string[];
  actor?: ActorDto;
  /** Aborts when nobody waits for the answer any more (the caller went away): the work stops at the next step. */
  signal?: AbortSignal;
}

/** Everything a parsed /find (or /ask retrieval) request asks for. */
export interface FindPlan {
  kbid: string;
  query: string;
  features: Feature[];
  topK: number;
  minSemantic?: number;
  minBm25: number;
  vector?: number[];
  vectorset?: string;
  fusion:
    | { name: 'default' }
    | { name: 'rrf'; k: number; window: number; boosting: { keyword: number; semantic: number } }
    | { name: 'weighted'; weight: number; window: number };
  rerankWindow: number;
  /** `predict` (the default: the built-in lexical reranker) or `noop` (the fused order). */
  reranker: 'predict' | 'noop';
  /** The graph feature's path query. */
  graphQuery?: GraphExpr;
  withDuplicates: boolean;
  /** `with_synonyms`: the KB's custom synonyms of the query's terms join its keyword query. */
  withSynonyms: boolean;
  highlight: boolean;
  debug: boolean;
  groups?: string[];
  showHidden: boolean;
  serialization: SerializationOptions;
  where: string;
  params: SqlParams;
  /**
   * Set when `where` is only the KB, security groups, hidden and filters the memory index can
   * decide (their Match): the memory index then filters alone. It holds the condition it stands for, and is used only while `where` is still that
   * (callers such as /ask add conditions to `where`).
   */
  memoryFilter: (MemoryFilter & { where: string }) | null;
  auditMetadata?: Record<string, unknown>;
  signal?: AbortSignal;
  /** `rephrase: true` (on /find and /ask): the query is to be rephrased, with these instructions if given. */
  rephrase?: { prompt?: string };
  /** Set once the query was rephrased: the caller's query (`query` is then the rephrased one). */
  originalQuery?: string;
}

export interface ParagraphRow {
  id: string;
  rid: string;
  field: string;
  split: string;
  paragraph_id: string;
  start_offset: number;
  end_offset: number;
  idx: number;
  page: number | null;
  /** Seconds into its recording (TRANSCRIPT paragraphs), else null. */
  start_seconds: number | null;
  end_seconds: number | null;
  text: string;
  kind: string;
  language: string;
  labels: string[];
}

/** The columns of a `ParagraphRow`, for every statement that reads paragraphs back. */
export const PARAGRAPH_COLUMNS =
  'id::text AS id, rid::text AS rid, field, split, paragraph_id, start_offset, end_offset, idx, page, start_seconds, end_seconds, text, kind, language, labels';

export interface RankedParagraph extends ParagraphRow {
  score: number;
  scoreType: ScoreType;
  order: number;
}

/** What FindService.retrieval returns: a plan's retrievers, on memory or SQL. */
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

export interface FindOutcome {
  plan: FindPlan;
  paragraphs: RankedParagraph[];
  minScore: { semantic: number; bm25: number };
  terms: string[];
  timings: Record<string, number>;
  /** The `relations` feature's result, when asked for. */
  relations?: RelationsResult;
}

@Injectable()
export class FindService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly context: SearchContextService,
    private readonly synonyms: SynonymsService,
    private readonly graph: GraphService,
    private readonly memory: SearchMemoryService,
    private readonly auditBatch: AuditBatchService,
    private readonly configs: KbConfigsService,
    private readonly rephraser: QueryRephraser,
  ) {}

  /** The built-in `predict` reranker (a cross-encoder would be another Reranker). */
  private readonly reranker: Reranker = new LexicalReranker();

  /** Reads a /find body (or /ask's retrieval members) into a plan; every problem → one 422. */
  async plan(
    req: RetrievalRequest,
    r: RequestReader,
    o: { defaultFeatures: Feature[]; allowed: readonly string[]; rephrase?: boolean },
  ): Promise<FindPlan> {
    const params = new SqlParams();
    const languages = await this.context.kbLanguages(req.kbid);
    const query = r.string('query', '', { max: 20_000 });
    const features = r.enumList('features', o.allowed as readonly string[], o.defaultFeatures) as Feature[];
    // The graph feature: paragraphs holding the edges a graph_query (a /graph path query) matches.
    const graphRaw = r.raw('graph_query');
    let graphQuery: GraphExpr | undefined;
    if (features.includes('graph')) {
      if (graphRaw === undefined || graphRaw === null) r.issue('graph_query', 'graph_query is required with the graph feature', 'missing');
      else graphQuery = parseGraphQuery(graphRaw, ['graph_query'], r);
      if (features.includes('relations')) r.issue('features', 'relations and graph cannot be asked together', 'value_error');
    } else if (graphRaw !== undefined && graphRaw !== null) r.issue('graph_query', 'graph_query needs the graph feature', 'value_error');
    const topK = r.int('top_k', 20, 1, 200);
    let minSemantic: number | undefined;
    let minBm25 = 0;
    const ms = r.raw('min_score');
    if (typeof ms === 'number') minSemantic = r.number('min_score', ms);
    else if (ms && typeof ms === 'object' && !Array.isArray(ms)) {
      const m = ms as Record<string, unknown>;
      for (const k of Object.keys(m))
        if (k !== 'semantic' && k !== 'bm25') r.issue(['min_score', k], 'Extra inputs are not permitted', 'extra_forbidden');
      minSemantic = r.number(['min_score', 'semantic'], m['semantic']);
      minBm25 = r.number(['min_score', 'bm25'], m['bm25'], { min: 0 }) ?? 0;
    } else if (ms !== undefined && ms !== null) r.issue('min_score', 'Input should be a number or {semantic, bm25}', 'model_type');
    const vectorRaw = r.raw('vector');
    let vector: number[] | undefined;
    if (vectorRaw !== undefined && vectorRaw !== null) {
      if (!Array.isArray(vectorRaw) || vectorRaw.length === 0 || vectorRaw.some((x) => typeof x !== 'number' || !Number.isFinite(x))) {
        r.issue('vector', 'Input should be a non-empty list of numbers', 'list_type');
      } else vector = vectorRaw as number[];
    }
    const vectorset = r.optionalString('vectorset');
    const fusion = this.readFusion(r);
    const { window: rerankWindow, name: reranker } = this.readReranker(r, topK);
    const withDuplicates = r.bool('with_duplicates', false);
    const highlight = r.bool('highlight', false);
    const debug = r.bool('debug', false);
    const showHidden = r.bool('show_hidden', false);
    const groups = readSecurityGroups(r, req.forced_groups);
    const serialization = readSerialization(r);
    const withSynonyms = r.bool('with_synonyms', false);
    let rephrase: FindPlan['rephrase'];
    if (o.rephrase) {
      const prompt = r.raw('rephrase_prompt');
      for (const issue of rephrasePromptIssues(prompt, [...r.loc, 'rephrase_prompt'])) r.issues.push(issue);
      if (r.bool('rephrase', false)) rephrase = typeof prompt === 'string' ? { prompt } : {};
    } else {
      r.unsupported('rephrase', 'query rephrasing is available on /find and /ask only');
      r.unsupported('rephrase_prompt', 'query rephrasing is available on /find and /ask only', (v) => v === undefined || v === null);
    }
    r.unsupported('query_image', 'image queries are not available', (v) => v === undefined || v === null);
    r.unsupported('search_configuration', 'stored search configurations are not available', (v) => v === undefined || v === null);
    r.unsupported('search_after', 'cursor pagination is not available; raise top_k', (v) => v === undefined || v === null);
    // `extracted` is deprecated (read above) and accepted without effect; `generative_model` is read by /find (rephrasing) and /ask.
    r.accept('generative_model');
    const auditMetadata = r.object('audit_metadata');
    if (auditMetadata && JSON.stringify(auditMetadata).length > 10_240)
      r.issue('audit_metadata', 'audit_metadata must be at most 10 KB', 'value_error');
    const kbParam = params.add(req.kbid);
    const filters = new FilterCompiler(params, PARAGRAPH_TARGET(kbParam), languages);
    const filter = filters.readAllMatch(r, { allowFieldFilters: true });
    const filterSql = filter.sql;
    const conds = [`p.kbid = ${kbParam}`, filterSql];
    conds.push(securityCondition(params, 'p.groups', groups, false));
    if (!showHidden) conds.push('NOT p.hidden');
    return {
      kbid: req.kbid,
      query,
      features,
      topK,
      minSemantic,
      minBm25,
      vector,
      vectorset,
      fusion,
      rerankWindow,
      reranker,
      graphQuery,
      withDuplicates,
      withSynonyms,
      highlight,
      debug,
      groups,
      showHidden,
      serialization,
      where: conds.join(' AND '),
      params,
      auditMetadata,
      signal: req.signal,
      rephrase,
      memoryFilter: filter.match
        ? { groups, showHidden, match: filterSql === 'TRUE' ? undefined : filter.match, where: conds.join(' AND ') }
        : null,
    };
  }

  private readFusion(r: RequestReader): FindPlan['fusion'] {
    const v = r.raw('rank_fusion');
    if (v === undefined || v === null) return { name: 'default' };
    if (v === 'rrf' || v === 'legacy') return { name: 'rrf', k: 60, window: 500, boosting: { keyword: 1, semantic: 1 } };
    if (typeof v !== 'object' || Array.isArray(v)) {
      r.issue('rank_fusion', "Input should be 'rrf' or {name: 'rrf', k, window, boosting}", 'union_tag_invalid');
      return { name: 'default' };
    }
    const o = v as Record<string, unknown>;
    if (o['name'] === 'weighted') {
      // This service's extension: score fusion, keyword/max + semantic weight · (similarity above threshold)/max.
      const b = (o['boosting'] ?? {}) as Record<string, unknown>;
      const weight = r.number(['rank_fusion', 'boosting', 'semantic'], b['semantic'], { min: 0 }) ?? 0.2;
      const window = Number.isInteger(o['window']) ? Math.min(Math.max(o['window'] as number, 1), 500) : 500;
      return { name: 'weighted', weight, window };
    }
    if (o['name'] !== undefined && o['name'] !== 'rrf' && o['name'] !== 'legacy')
      r.issue(['rank_fusion', 'name'], "Input should be 'rrf' or 'weighted'", 'enum');
    const k = r.number(['rank_fusion', 'k'], o['k'], { min: 0 }) ?? 60;
    const w = o['window'];
    let window = 500;
    if (Number.isInteger(w) && (w as number) >= 1 && (w as number) <= 500) window = w as number;
    else if (w !== undefined && w !== null)
      r.issue(['rank_fusion', 'window'], 'Input should be an integer between 1 and 500', 'less_than_equal');
    const b = (o['boosting'] ?? {}) as Record<string, unknown>;
    const boosting = {
      keyword: r.number(['rank_fusion', 'boosting', 'keyword'], b['keyword']) ?? 1,
      semantic: r.number(['rank_fusion', 'boosting', 'semantic'], b['semantic']) ?? 1,
    };
    return { name: 'rrf', k, window, boosting };
  }

  private readReranker(r: RequestReader, topK: number): { window: number; name: 'predict' | 'noop' } {
    const v = r.raw('reranker');
    // By default the reranker reorders what is returned: it never trades a retrieved paragraph for another.
    const dflt = topK;
    if (v === undefined || v === null || v === 'predict') return { window: dflt, name: 'predict' };
    if (v === 'noop') return { window: dflt, name: 'noop' };
    if (typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const name = o['name'] === 'noop' ? 'noop' : 'predict';
      if (o['name'] !== 'predict' && o['name'] !== 'noop') r.issue(['reranker', 'name'], "Input should be 'predict' or 'noop'", 'enum');
      const w = o['window'];
      if (w === undefined || w === null) return { window: dflt, name };
      if (!Number.isInteger(w) || (w as number) < topK || (w as number) > 200) {
        r.issue(['reranker', 'window'], `Input should be an integer between top_k (${topK}) and 200`, 'value_error');
        return { window: topK, name };
      }
      return { window: w as number, name };
    }
    r.issue('reranker', "Input should be 'predict', 'noop' or {name, window}", 'enum');
    return { window: topK, name: 'noop' };
  }

  /**
   * A plan's keyword and semantic retrievers, scored on the KB's memory index when it is current
   * (one read of its generation, shared by both), else by SQL: the same hits either way
   * (docs/decisions/0014). /find, /search and /suggest all retrieve through it.
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

  /** Runs the plan: retrievers (in parallel), fusion, duplicate collapsing, top_k. */
  async run(plan: FindPlan): Promise<FindOutcome> {
    const t0 = Date.now();
    const timings: Record<string, number> = {};
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
    const wantSemantic = plan.features.includes('semantic') && (plan.vector !== undefined || plan.query.trim() !== '');
    let minSemantic = plan.minSemantic ?? 0;
    let vectorset = plan.vectorset ?? '';
    const scope = () => ({ kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) });
    const retrieval = this.retrieval(plan, timings, t0);
    if (wantKeyword || wantSemantic) void retrieval.index(); // the generation is read while the query is embedded
    const kw: Promise<RetrieverHit[]> = wantKeyword
      ? retrieval.keyword(terms, window, plan.minBm25).then((h) => ((timings['keyword_ms'] = Date.now() - t0), h))
      : Promise.resolve([]);
    const sem: Promise<RetrieverHit[]> = wantSemantic
      ? (async () => {
          const q = await this.queryVector(plan);
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
    plan.signal?.throwIfAborted();
    let fused: FusedHit[];
    if (plan.fusion.name === 'rrf') fused = rrf(keywordHits, semanticHits, plan.fusion);
    else if (plan.fusion.name === 'weighted')
      fused = weightedFusion(keywordHits, semanticHits, { weight: plan.fusion.weight, window: plan.fusion.window, floor: minSemantic });
    else {
      const d = DEFAULT_FUSION[vectorset];
      fused = d
        ? weightedFusion(keywordHits, semanticHits, { weight: d.weight, window, floor: minSemantic })
        : rrf(keywordHits, semanticHits, { k: 60, window, boosting: { keyword: 1, semantic: 1 } });
    }
    fused = fuseGraph(fused, graphHits);
    const fusedCandidates = fused.slice(0, Math.max(plan.topK * 3, plan.topK + 20, plan.rerankWindow));
    // Paragraph rows are read as they are reached, top_k at first: most requests need no more
    // (a duplicate or a paragraph deleted meanwhile costs one more read), and the texts of the
    // spare candidates are no longer shipped from the database for nothing. The reranker reads the
    // rows of the candidates it reorders (its window) before that.
    const rows = new Map<string, ParagraphRow>();
    const { candidates, read: reranked } = await this.rerank(plan, fusedCandidates, rows);
    let read = reranked;
    const out: RankedParagraph[] = [];
    const seen = new Map<string, Set<string>>();
    for (let i = 0; i < candidates.length; i++) {
      const h = candidates[i] as FusedHit;
      if (i >= read) {
        plan.signal?.throwIfAborted();
        const more = candidates.slice(read, read + (read === 0 ? plan.topK - out.length : Math.max(2 * (plan.topK - out.length), 10)));
        for (const [id, row] of await this.paragraphRows(more.map((x) => x.id))) rows.set(id, row);
        read += more.length;
      }
      const row = rows.get(h.id);
      if (!row) continue;
      if (!plan.withDuplicates) {
        const texts = seen.get(row.rid) ?? new Set<string>();
        const norm = row.text.trim().toLowerCase();
        if (texts.has(norm)) continue;
        texts.add(norm);
        seen.set(row.rid, texts);
      }
      out.push({ ...row, score: h.score, scoreType: h.scoreType, order: out.length });
      if (out.length >= plan.topK) break;
    }
    timings['total_ms'] = Date.now() - t0;
    return { plan, paragraphs: out, minScore: { semantic: minSemantic, bm25: plan.minBm25 }, terms, timings };
  }

  /**
   * The reranker's order of the best `rerankWindow` candidates (with its scores), the rest after
   * them; `read` is how many leading candidates have their rows in `rows` already.
   */
  private async rerank(
    plan: FindPlan,
    candidates: FusedHit[],
    rows: Map<string, ParagraphRow>,
  ): Promise<{ candidates: FusedHit[]; read: number }> {
    const reranker = plan.reranker === 'predict' ? this.reranker : NOOP_RERANKER;
    if (reranker === NOOP_RERANKER || !plan.query.trim()) return { candidates, read: 0 };
    const window = candidates.slice(0, plan.rerankWindow);
    for (const [id, row] of await this.paragraphRows(window.map((h) => h.id))) rows.set(id, row);
    const head = window.filter((h) => rows.has(h.id));
    const byId = new Map(head.map((h) => [h.id, h]));
    const reranked = reranker.rerank(
      { text: plan.query },
      head.map((h) => {
        const row = rows.get(h.id) as ParagraphRow;
        return { id: h.id, text: row.text, language: row.language, score: h.score };
      }),
    );
    // As in the reference, a paragraph the reranker scored says so (API-MAP 4.5): its score is the reranker's.
    return {
      candidates: [
        ...reranked.map((c) => ({ ...(byId.get(c.id) as FusedHit), score: c.score, scoreType: 'RERANKER' as const })),
        ...candidates.slice(plan.rerankWindow),
      ],
      read: reranked.length,
    };
  }

  /** The `relations` feature: entities named in the query, with the resources and entities around them. */
  relations(plan: Pick<FindPlan, 'kbid' | 'query' | 'where' | 'params'>): Promise<RelationsResult> {
    return relationsSearch(this.ds.manager, { kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) }, plan.query);
  }

  /** The analysed terms of the keyword query, with the KB's synonyms when `with_synonyms` asks. */
  async keywordTerms(plan: Pick<FindPlan, 'kbid' | 'query' | 'withSynonyms'>, languages: string[]): Promise<string[]> {
    if (!plan.query.trim()) return [];
    return analyzeQuery(plan.withSynonyms ? await this.synonyms.expand(plan.kbid, plan.query) : plan.query, languages);
  }

  async paragraphRows(ids: string[]): Promise<Map<string, ParagraphRow>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.ds.query(`SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE id = ANY($1::bigint[])`, [
      ids,
    ])) as ParagraphRow[];
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The resources of the hits, serialized as `show` asks (one query for rows, one for fields if needed). */
  async resources(kbid: string, rids: string[], s: SerializationOptions): Promise<Map<string, ResourceDto>> {
    if (rids.length === 0) return new Map();
    const rows = await this.ds.getRepository(ResourceEntity).findBy({ kbid, id: In(rids) });
    const needsFields = s.show.some((x) => x === 'values' || x === 'extracted' || x === 'errors');
    const fields = needsFields ? await this.ds.getRepository(FieldEntity).findBy({ rid: In(rids) }) : [];
    const out = new Map<string, ResourceDto>();
    for (const r of rows)
      out.set(
        r.id,
        serializeResource(
          r,
          fields.filter((f) => f.rid === r.id),
          s,
        ),
      );
    return out;
  }

  /** /find: the KnowledgeboxFindResults shape of API-MAP 2.2. */
  async find(request: RetrievalRequest): Promise<FindResponse> {
    const started = Date.now();
    // A named search configuration is the base of the body (docs/kb-configuration.md).
    const req = { ...request, body: await this.configs.applySearch(request.kbid, request.body, 'find') };
    const r = new RequestReader(req.body);
    const plan = await this.plan(req, r, { defaultFeatures: ['keyword', 'semantic'], allowed: FIND_FEATURES, rephrase: true });
    const generativeModel = r.optionalString('generative_model');
    r.finish();
    if (plan.rephrase) {
      const generator = this.rephraser.generator(await this.rephraser.kbConfig(req.kbid, req.signal), generativeModel);
      this.rephrased(
        plan,
        await this.rephraser.rephrase(generator, {
          kbid: req.kbid,
          question: plan.query,
          history: [],
          prompt: plan.rephrase.prompt,
          signal: req.signal,
        }),
      );
    }
    const outcome = await this.run(plan);
    if (plan.features.includes('relations')) outcome.relations = await this.relations(plan);
    plan.signal?.throwIfAborted();
    const body = await this.findResults(outcome);
    this.audit(
      req,
      'search',
      started,
      {
        query: plan.originalQuery ?? plan.query,
        ...(plan.originalQuery !== undefined ? { rephrased_question: plan.query } : {}),
        features: plan.features,
        resources_count: Object.keys(body['resources'] as object).length,
        filters: (req.body as Record<string, unknown>)['filter_expression'] ?? (req.body as Record<string, unknown>)['filters'] ?? null,
      },
      plan.auditMetadata,
    );
    return body;
  }

  /** Retrieval uses the rephrased query from now on; the response reports both. */
  rephrased(plan: FindPlan, query: string): void {
    plan.originalQuery ??= plan.query;
    plan.query = query;
  }

  async findResults(outcome: FindOutcome): Promise<FindResponse> {
    const { plan, paragraphs } = outcome;
    const rids = [...new Set(paragraphs.map((p) => p.rid))];
    const resources = await this.resources(plan.kbid, rids, plan.serialization);
    const termSet = new Set(outcome.terms);
    const out: Record<string, FindResource> = {};
    for (const p of paragraphs) {
      const resource = resources.get(p.rid);
      if (!resource) continue;
      const entry = (out[p.rid] ??= { ...resource, fields: {} });
      const fieldKey = `/${p.field}`;
      (entry.fields[fieldKey] ??= { paragraphs: {} }).paragraphs[p.paragraph_id] = this.paragraphJson(p, plan.highlight ? termSet : null);
    }
    return {
      resources: out,
      relations: outcome.relations ?? { entities: {} },
      query: plan.originalQuery ?? plan.query,
      rephrased_query: plan.originalQuery !== undefined ? plan.query : null,
      total: paragraphs.length,
      page_number: 0,
      page_size: plan.topK,
      next_page: false,
      nodes: null,
      shards: null,
      autofilters: [],
      min_score: outcome.minScore,
      best_matches: paragraphs.map((p) => p.paragraph_id),
      metrics: plan.debug ? outcome.timings : null,
      search_after: null,
    };
  }

  paragraphJson(p: RankedParagraph, highlightTerms: Set<string> | null): FindParagraph {
    return {
      score: p.score,
      score_type: p.scoreType,
      order: p.order,
      text: highlightTerms ? highlight(p.text, p.language, highlightTerms) : p.text,
      id: p.paragraph_id,
      labels: p.labels,
      position: {
        page_number: p.page ?? 0,
        index: p.idx,
        start: p.start_offset,
        end: p.end_offset,
        start_seconds: p.start_seconds ?? null,
        end_seconds: p.end_seconds ?? null,
      },
      fuzzy_result: false,
      page_with_visual: false,
      reference: null,
      is_a_table: p.kind === 'TABLE',
      relevant_relations: null,
    };
  }

  /** Activity event for the reporting service, published in a batch (AuditBatchService); never fails the request. */
  audit(
    req: RetrievalRequest,
    type: 'search' | 'suggest' | 'chat',
    started: number,
    details: Record<string, unknown>,
    auditMetadata?: Record<string, unknown>,
  ): void {
    this.auditBatch.record({
      event_id: randomUUID(),
      kbid: req.kbid,
      type,
      date: new Date().toISOString(),
      total_duration: Date.now() - started,
      user_type: req.actor?.user_type ?? 'user',
      ...(req.actor?.user ? { user_id: req.actor.user } : {}),
      ...(req.actor?.client_type ? { client_type: req.actor.client_type } : {}),
      ...(auditMetadata ? { audit_metadata: auditMetadata } : {}),
      details,
    });
  }
}

/** Wraps the words of `text` whose analysed term is a query term in `<mark>…</mark>`. */
export function highlight(text: string, language: string, terms: Set<string>): string {
  let out = '';
  let at = 0;
  for (const t of tokenize(text, language || undefined)) {
    if (!terms.has(t.term)) continue;
    out += `${text.slice(at, t.start)}<mark>${text.slice(t.start, t.end)}</mark>`;
    at = t.end;
  }
  return out + text.slice(at);
}
