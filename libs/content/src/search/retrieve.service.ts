import { Injectable } from '@nestjs/common';
import type {
  RetrievalRequestBase,
  RetrieveMatch,
  RetrieveRawQuery,
  RetrieveRequest,
  RetrieveResponse,
  RetrieveScore,
  RetrieveTextQuery,
} from '@kb/contracts';
import { DEFAULT_FUSION, FindMerge } from './find/find-merge';
import { FindPlanner, type Feature, type FindPlan, type RetrievalRequest } from './find/find-plan';
import { FindRetrieval } from './find/find-retrieval';
import { SearchAuditService } from './find/search-audit.service';
import type { RankedParagraph } from './find/search.repository';

/** Paragraph kinds of text read out of an image (OCR, image descriptions). */
const IMAGE_KINDS = new Set(['OCR', 'INCEPTION']);

/**
 * `/retrieve` (the reference's hidden retrieval route): the /find pipeline's planning, retrieval,
 * fusion and reranking, answered as paragraph ids with their scores and metadata — no resources
 * rendered. The request's shape differs from /find's (a text or raw query, nested filters, no
 * reranker unless asked); it is turned into /find's members and planned the same way, so groups,
 * hidden and filters hold as on /find.
 */
@Injectable()
export class RetrieveService {
  constructor(
    private readonly planner: FindPlanner,
    private readonly retrieval: FindRetrieval,
    private readonly merger: FindMerge,
    private readonly auditor: SearchAuditService,
  ) {}

  async retrieve(req: Omit<RetrievalRequest, 'body'> & { body: RetrieveRequest }): Promise<RetrieveResponse> {
    const started = Date.now();
    const { body, features } = findMembersOf(req.body);
    const plan = await this.planner.plan({ ...req, body }, { defaultFeatures: features, loc: ['body', 'filters'] });
    const t0 = Date.now();
    const retrieved = await this.retrieval.retrieve(plan, {}, t0);
    plan.signal?.throwIfAborted();
    const { paragraphs } = await this.merger.merge(plan, retrieved);
    const fused = fusionType(plan, retrieved.vectorset);
    const both = plan.features.includes('keyword') && plan.features.includes('semantic');
    this.auditor.audit(req, 'search', started, {
      query: plan.query,
      features: plan.features,
      resources_count: new Set(paragraphs.map((p) => p.rid)).size,
      filters: req.body.filters?.filter_expression ?? null,
      retrieve: true,
    });
    return { matches: paragraphs.map((p) => matchOf(p, both ? fused : undefined)) };
  }
}

/** The /find members (and default features) a /retrieve request stands for. */
export function findMembersOf(r: RetrieveRequest): { body: RetrievalRequestBase; features: Feature[] } {
  const f = r.filters ?? {};
  const body: RetrievalRequestBase = {
    top_k: r.top_k ?? 20,
    ...(f.filter_expression ? { filter_expression: f.filter_expression } : {}),
    show_hidden: f.show_hidden ?? false,
    ...(f.security ? { security: f.security } : {}),
    with_duplicates: f.with_duplicates ?? false,
    ...(r.rank_fusion !== undefined && r.rank_fusion !== null ? { rank_fusion: r.rank_fusion } : {}),
    // The reference reranks only when asked.
    reranker: r.reranker ?? 'noop',
  };
  const features: Feature[] = [];
  const min: { semantic?: number; bm25?: number } = {};
  if ('query' in r.query) {
    const q = r.query as RetrieveTextQuery;
    body.query = q.query;
    const k = q.override?.keyword;
    const s = q.override?.semantic;
    if (k !== 'disabled') {
      features.push('keyword');
      if (k?.min_score !== undefined) min.bm25 = k.min_score;
      if (k?.with_synonyms) body.with_synonyms = true;
    }
    if (s !== 'disabled') {
      features.push('semantic');
      if (s?.vector) body.vector = s.vector;
      if (s?.vectorset) body.vectorset = s.vectorset;
      if (s?.min_score !== undefined) min.semantic = s.min_score;
    }
  } else {
    const q = r.query as RetrieveRawQuery;
    if (q.keyword) {
      features.push('keyword');
      body.query = q.keyword.query;
      if (q.keyword.min_score !== undefined) min.bm25 = q.keyword.min_score;
      if (q.keyword.with_synonyms) body.with_synonyms = true;
    }
    if (q.semantic) {
      features.push('semantic');
      body.vector = q.semantic.query;
      body.vectorset = q.semantic.vectorset;
      min.semantic = q.semantic.min_score ?? -1;
    }
  }
  if (min.semantic !== undefined || min.bm25 !== undefined) body.min_score = min;
  body.features = features;
  return { body, features };
}

/** How the keyword and semantic lists were fused (the request's fusion, else the model's default). */
function fusionType(plan: FindPlan, vectorset: string): RetrieveScore['type'] {
  if (plan.fusion.name === 'weighted') return 'wCombSUM';
  if (plan.fusion.name === 'rrf') return 'rrf';
  return DEFAULT_FUSION[vectorset] ? 'wCombSUM' : 'rrf';
}

/** A ranked paragraph as a RetrievalMatch (the score that set its place; `fused` when two retrievers ran). */
export function matchOf(p: RankedParagraph, fused: RetrieveScore['type'] | undefined): RetrieveMatch {
  const score: RetrieveScore =
    p.scoreType === 'RERANKER'
      ? { score: p.score, source: 'reranker', type: 'reranker' }
      : p.scoreType === 'RELATION_RELEVANCE'
        ? { score: p.score, source: 'rank_fusion', type: 'rrf' }
        : fused
          ? { score: p.score, source: 'rank_fusion', type: fused }
          : { score: p.score, source: 'index', type: p.scoreType === 'VECTOR' ? 'semantic' : 'keyword' };
  return {
    id: p.paragraph_id,
    score: { value: score.score, source: score.source, type: score.type, history: [score] },
    metadata: {
      // (the index keeps a paragraph's labels together: its resource's, its field's and its own)
      field_labels: [],
      paragraph_labels: p.labels,
      is_an_image: IMAGE_KINDS.has(p.kind),
      is_a_table: p.kind === 'TABLE',
      source_file: null,
      page: p.page,
      in_page_with_visual: null,
    },
  };
}
