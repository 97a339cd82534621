import { Injectable } from '@nestjs/common';
import type { ActorDto, RerankerName, RetrievalRequestBase } from '@kb/contracts';
import { parseGraphQuery, type GraphExpr } from '../graph.service';
import { PARAGRAPH_TARGET, FilterCompiler, securityCondition, securityGroupsOf } from '../query/filters';
import { Issues } from '../query/issues';
import { SqlParams } from '../query/sql';
import type { MemoryFilter } from '../memory/kb-memory-index';
import { SearchContextService } from '../search-context.service';
import { distinctOr, serializationOf, type SerializationOptions } from '../query/serialization';

/** What a retrieval request can ask for (/find's features, and /search's `fulltext`). */
export type Feature = 'keyword' | 'semantic' | 'relations' | 'graph' | 'fulltext';

/** A retrieval request (/find, /search, /suggest, /ask, an /ask prequery), as its DTO accepted it. */
export interface RetrievalRequest<Body extends RetrievalRequestBase = RetrievalRequestBase> {
  kbid: string;
  body: Body;
  /** Groups that replace the body's (temporal keys with groups, on /ask only). */
  forced_groups?: string[];
  actor?: ActorDto;
  /** Aborts when nobody waits for the answer any more (the caller went away): the work stops at the next step. */
  signal?: AbortSignal;
}

/** Everything a /find (or /ask retrieval) request asks for. */
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
  /** `predict` (the default: the built-in lexical reranker), `noop` (the fused order) or `cross-encoder` (a model, RERANKER_MODEL_DIR). */
  reranker: RerankerName;
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

/**
 * Request planning: a retrieval request, already checked by its DTO (at the gateway and again on
 * the bus), becomes a FindPlan — its members with their defaults, the SQL condition of its KB,
 * groups, hidden and filters, and the same condition for the memory index when it can decide it.
 */
@Injectable()
export class FindPlanner {
  constructor(private readonly context: SearchContextService) {}

  async plan(
    req: RetrievalRequest,
    o: { defaultFeatures: readonly Feature[]; rephrase?: boolean; loc?: (string | number)[] },
  ): Promise<FindPlan> {
    const body = req.body;
    const issues = new Issues(o.loc);
    const params = new SqlParams();
    const languages = await this.context.kbLanguages(req.kbid);
    const features = distinctOr(body.features as Feature[] | undefined, o.defaultFeatures);
    // The graph feature: paragraphs holding the edges a graph_query (a /graph path query) matches.
    const graphQuery =
      features.includes('graph') && body.graph_query ? parseGraphQuery(body.graph_query, ['graph_query'], issues) : undefined;
    const topK = body.top_k ?? 20;
    const ms = body.min_score;
    const minSemantic = typeof ms === 'number' ? ms : (ms?.semantic ?? undefined);
    const minBm25 = (typeof ms === 'object' && ms !== null ? ms.bm25 : undefined) ?? 0;
    const { window: rerankWindow, name: reranker } = rerankerOf(body.reranker, topK);
    const groups = securityGroupsOf(body.security, req.forced_groups);
    const showHidden = body.show_hidden ?? false;
    const rephrase =
      o.rephrase && body.rephrase ? (typeof body.rephrase_prompt === 'string' ? { prompt: body.rephrase_prompt } : {}) : undefined;
    const kbParam = params.add(req.kbid);
    // A key_value filter becomes the resources it selects (when they are few), so the memory index can decide it.
    const kv = body.filter_expression?.key_value;
    const kvRids = kv ? await this.context.keyValueResources(req.kbid, kv) : undefined;
    const filter = new FilterCompiler(params, PARAGRAPH_TARGET(kbParam), languages, kvRids).compileMatch(body, issues, {
      allowFieldFilters: true,
    });
    issues.throwIfAny();
    const conds = [`p.kbid = ${kbParam}`, filter.sql];
    conds.push(securityCondition(params, 'p.groups', groups, false));
    if (!showHidden) conds.push('NOT p.hidden');
    const where = conds.join(' AND ');
    return {
      kbid: req.kbid,
      query: body.query ?? '',
      features,
      topK,
      minSemantic,
      minBm25,
      vector: body.vector ?? undefined,
      vectorset: body.vectorset ?? undefined,
      fusion: fusionOf(body.rank_fusion),
      rerankWindow,
      reranker,
      graphQuery,
      withDuplicates: body.with_duplicates ?? false,
      withSynonyms: body.with_synonyms ?? false,
      highlight: body.highlight ?? false,
      debug: body.debug ?? false,
      groups,
      showHidden,
      serialization: serializationOf(body),
      where,
      params,
      auditMetadata: body.audit_metadata ?? undefined,
      signal: req.signal,
      rephrase,
      memoryFilter: filter.match ? { groups, showHidden, match: filter.sql === 'TRUE' ? undefined : filter.match, where } : null,
    };
  }
}

/** `rank_fusion`: absent → the model's default; `'rrf'`/`'legacy'` or `{name: 'rrf', k, window, boosting}`; `{name: 'weighted', …}`. */
export function fusionOf(v: RetrievalRequestBase['rank_fusion'] | null): FindPlan['fusion'] {
  if (v === undefined || v === null) return { name: 'default' };
  if (v === 'rrf' || v === 'legacy') return { name: 'rrf', k: 60, window: 500, boosting: { keyword: 1, semantic: 1 } };
  if (v.name === 'weighted') {
    // This service's extension: score fusion, keyword/max + semantic weight · (similarity above threshold)/max.
    const w = v.window;
    const window = typeof w === 'number' && Number.isInteger(w) ? Math.min(Math.max(w, 1), 500) : 500;
    return { name: 'weighted', weight: v.boosting?.semantic ?? 0.2, window };
  }
  return {
    name: 'rrf',
    k: v.k ?? 60,
    window: v.window ?? 500,
    boosting: { keyword: v.boosting?.keyword ?? 1, semantic: v.boosting?.semantic ?? 1 },
  };
}

/** `reranker`: `predict` (the default), `noop` or `cross-encoder`, reordering `window` candidates (by default top_k: it never trades a retrieved paragraph for another). */
export function rerankerOf(v: RetrievalRequestBase['reranker'] | null, topK: number): { window: number; name: RerankerName } {
  if (v === undefined || v === null) return { window: topK, name: 'predict' };
  if (typeof v === 'string') return { window: topK, name: v };
  return { window: v.window ?? topK, name: v.name };
}
