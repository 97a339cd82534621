import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { FindRelations, RelatedTo } from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../../content.tokens';
import type { FindPlan } from '../../search/find/find-plan';
import { FindMerge } from '../../search/find/find-merge';
import type { FindOutcome } from '../../search/find/find-results';
import type { RankedParagraph } from '../../search/find/search.repository';
import { SqlParams } from '../../search/query/sql';
import type { Generator } from '../generation';
import type { Graph } from '../rag-strategies';
import {
  detectEntities,
  edgesAround,
  GRAPH_EXPLORATION,
  resourceTitles,
  scopedParagraphs,
  type EdgeKinds,
  type EdgeRow,
  type GraphScope,
} from './graph-explore';
import { GraphBudgetSpent, withinBudget } from './graph-budget';
import { rankByGenerator, rankByReranker, tripletText, triplets, type TokenUsage, type Triplet } from './graph-rank';

/** The strategy's results as a /find outcome, and the tokens its generative ranking used (they count in the answer's). */
export type GraphOutcome = FindOutcome & { tokens: TokenUsage };

/** The field the relation texts are filed under in results (the reference's `a/usermetadata`: a resource's own metadata). */
export const RELATION_TEXT_FIELD = 'a/usermetadata';

/**
 * The graph_beta strategy of /ask (nucliadb_models GraphStrategy): the entities of the question,
 * the knowledge graph explored from them hop by hop — after each hop every relation found so far
 * ranked against the question and the best `top_k` kept, the next hop starting from their ends —
 * then the kept relations as context: their texts ("A — relation → B"), or the paragraphs they were
 * found in. Everything is read under the request's scope (its KB, filters, security groups, hidden
 * resources), so the graph gives no more than the text retrieval could. The result is a /find
 * outcome the answer merges with the retrieval's, as a prequery (`graph`) of weight `weight`.
 */
@Injectable()
export class GraphStrategyService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly merge: FindMerge,
  ) {}

  /** The exploration's time (GRAPH_EXPLORATION.budgetMs; tests shorten it). */
  budgetMs: number = GRAPH_EXPLORATION.budgetMs;

  async run(plan: FindPlan, s: Graph, question: string, generator: Generator): Promise<GraphOutcome> {
    const started = Date.now();
    // Each step's queries run within what is left of the exploration's time (cancelled past it).
    const within = <T>(work: (m: EntityManager) => Promise<T>) =>
      withinBudget(this.ds, this.budgetMs - (Date.now() - started), work, plan.signal);
    const tokens: TokenUsage = { input: 0, output: 0 };
    const scope: GraphScope = { kbid: plan.kbid, where: plan.where, params: new SqlParams(plan.params.values) };
    const kinds: EdgeKinds = { excludeProcessor: s.excludeProcessorRelations, withParagraph: !s.relationText };
    const explored = new Set<string>();
    const seen: string[] = [];
    let kept: Triplet[] = [];
    const titles = new Map<string, string>();
    const timings: Record<string, number> = {};
    let hops = 0;
    try {
      let frontier = await within((m) => detectEntities(m, scope, kinds, question, s.detection));
      for (let hop = 0; hop < s.hops && frontier.length; hop++) {
        plan.signal?.throwIfAborted();
        // Bounded: edges per hop and per request, and the time spent (what the hops reached by then is used).
        if (seen.length >= GRAPH_EXPLORATION.maxEdges) break;
        frontier.forEach((e) => explored.add(e));
        const limit = Math.min(GRAPH_EXPLORATION.maxEdgesPerHop, GRAPH_EXPLORATION.maxEdges - seen.length);
        const from = frontier;
        const step = await within(async (m) => {
          const edges = (await edgesAround(m, scope, kinds, from, seen, limit)).map((e) => ({ ...e, hop }));
          const rids = [...new Set(edges.flatMap((e) => ([e.source_type, e.dest_type].includes('resource') ? [e.rid] : [])))];
          return {
            edges,
            titles: await resourceTitles(
              m,
              plan.kbid,
              rids.filter((r) => !titles.has(r)),
            ),
          };
        });
        const found = step.edges;
        if (!found.length) break;
        for (const [id, title] of step.titles) titles.set(id, title);
        seen.push(...found.map((e) => e.id));
        const pool = triplets([...kept.flatMap((t) => t.edges), ...found], titles);
        kept = (await this.rank(plan, s, question, generator, pool, tokens)).slice(0, s.topK);
        hops = hop + 1;
        // The next hop starts from the kept relations' entity ends not explored yet.
        frontier = [
          ...new Set(
            kept.flatMap((t) =>
              t.edges.flatMap((e) => [
                ...(e.source_type === 'entity' ? [e.source_value.toLowerCase()] : []),
                ...(e.dest_type === 'entity' ? [e.dest_value.toLowerCase()] : []),
              ]),
            ),
          ),
        ]
          .filter((v) => !explored.has(v))
          .slice(0, GRAPH_EXPLORATION.maxFrontier);
      }
    } catch (err) {
      if (!(err instanceof GraphBudgetSpent)) throw err;
      this.logger.info(
        { kbid: plan.kbid, hops, budget_ms: this.budgetMs },
        'graph_beta: exploration time spent; the hops reached are used',
      );
    }
    timings['graph_exploration'] = (Date.now() - started) / 1000;
    timings['graph_hops'] = hops;
    const paragraphs = s.relationText ? relationTexts(kept) : await this.relationParagraphs(scope, kept, s.topK);
    return {
      plan,
      paragraphs,
      minScore: { semantic: 0, bm25: 0 },
      terms: [],
      timings,
      relations: relationsOf(kept),
      tokens,
    };
  }

  private async rank(
    plan: FindPlan,
    s: Graph,
    question: string,
    generator: Generator,
    pool: Triplet[],
    tokens: TokenUsage,
  ): Promise<Triplet[]> {
    const byReranker = await rankByReranker(this.merge.reranker(plan.reranker), question, pool, plan.signal);
    if (s.ranking !== 'generative') return byReranker;
    try {
      return await rankByGenerator(generator, question, byReranker, plan.signal, tokens);
    } catch (err) {
      plan.signal?.throwIfAborted();
      // The answer still comes: the reranker's order stands in for the model's (docs/ask.md "graph_beta").
      this.logger.warn(
        { kbid: plan.kbid, err: (err as Error).message },
        'graph_beta: generative relation ranking failed; reranker order used',
      );
      return byReranker;
    }
  }

  /** The paragraphs the kept relations were found in, in the order of their best relation, the first `topK`. */
  private async relationParagraphs(scope: GraphScope, kept: Triplet[], topK: number): Promise<RankedParagraph[]> {
    const first = new Map<string, { rank: number; score: number }>();
    kept.forEach((t, rank) => {
      for (const e of t.edges) if (e.paragraph && !first.has(e.paragraph)) first.set(e.paragraph, { rank, score: t.score });
    });
    const rows = await scopedParagraphs(this.ds.manager, scope, [...first.keys()]);
    const at = (id: string) => first.get(id) as { rank: number; score: number };
    return rows
      .sort((a, b) => at(a.paragraph_id).rank - at(b.paragraph_id).rank || a.paragraph_id.localeCompare(b.paragraph_id))
      .slice(0, topK)
      .map((r, order) => ({ ...r, score: at(r.paragraph_id).score, scoreType: 'RELATION_RELEVANCE' as const, order }));
  }
}

/**
 * One context piece per kept relation, its text "A — relation → B", filed under its resource
 * (the first edge's) as `{rid}/a/usermetadata/{n}-{n+1}` — as the reference files them — so the
 * retrieval, the context and the citations name the same id and the resource it came from.
 */
function relationTexts(kept: Triplet[]): RankedParagraph[] {
  const counters = new Map<string, number>();
  return kept.map((t, order) => {
    const rid = (t.edges[0] as EdgeRow).rid;
    const n = counters.get(rid) ?? 0;
    counters.set(rid, n + 1);
    return {
      id: `graph:${rid}:${n}`,
      rid,
      field: RELATION_TEXT_FIELD,
      split: '',
      paragraph_id: `${rid}/${RELATION_TEXT_FIELD}/${n}-${n + 1}`,
      start_offset: n,
      end_offset: n + 1,
      idx: n,
      page: null,
      start_seconds: null,
      end_seconds: null,
      text: tripletText(t),
      kind: 'TEXT',
      language: '',
      labels: [],
      score: t.score,
      scoreType: 'RELATION_RELEVANCE',
      order,
    };
  });
}

/** The kept relations in the `relations` shape of /find: by subject entity (an entity found in a resource: by the entity, `in`). */
function relationsOf(kept: Triplet[]): FindRelations {
  const entities: FindRelations['entities'] = {};
  for (const t of kept) {
    for (const e of t.edges) {
      const fromResource = e.source_type === 'resource';
      const key = fromResource ? e.dest_value : e.source_value;
      const related: RelatedTo = {
        entity: fromResource ? e.source_value : e.dest_value,
        entity_type: (fromResource ? e.source_type : e.dest_type) === 'resource' ? 'resource' : 'entity',
        entity_subtype: '',
        relation: e.relation as RelatedTo['relation'],
        relation_label: e.label,
        direction: fromResource ? 'in' : 'out',
        metadata: { paragraph_id: e.paragraph, score: t.score, hop: e.hop },
        resource_id: e.rid,
      };
      (entities[key] ??= { related_to: [] }).related_to.push(related);
    }
  }
  return { entities };
}
