import { Inject, Injectable } from '@nestjs/common';
import {
  SEARCH_DEFAULT_FEATURES,
  SUGGEST_FEATURES,
  type SearchRequest,
  type SearchResponse,
  type SuggestRequest,
  type SuggestResponse,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { analyzeQuery } from './analysis';
import { FindPlanner, type FindPlan, type RetrievalRequest } from './find/find-plan';
import { highlight, paragraphPosition } from './find/find-results';
import { FindRetrieval, type PlanRetrieval } from './find/find-retrieval';
import { SearchAuditService } from './find/search-audit.service';
import { SearchRepository, type ParagraphRow } from './find/search.repository';
import type { RetrieverHit } from './query/fusion';
import { distinctOr } from './query/serialization';
import { facetCounts } from './query/facets';
import { memoryFacets, memoryTags } from './memory/memory-facets';
import { SqlParams, likePrefix } from './query/sql';
import { SearchContextService } from './search-context.service';
import { EntitiesGroupsService } from '../entities-groups/entities-groups.service';
import { QueryRephraser } from '../ask/query-rephraser.service';

/** Entities /suggest returns at most. */
const ENTITY_SUGGESTIONS = 20;

const fieldParts = (p: ParagraphRow) => {
  const [letter, ...rest] = p.field.split('/');
  return { field_type: letter as string, field: rest.join('/') };
};
const stripL = (labels: string[]) => labels.filter((l) => l.startsWith('/l/')).map((l) => l.slice(3));

/**
 * `/search` (API-MAP 2.3: separate `paragraphs`, `fulltext` and `sentences` lists, facets,
 * offset paging) and `/suggest` (2.5: paragraphs by prefix, entities).
 */
@Injectable()
export class SearchListsService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly planner: FindPlanner,
    private readonly retriever: FindRetrieval,
    private readonly repository: SearchRepository,
    private readonly auditor: SearchAuditService,
    private readonly context: SearchContextService,
    private readonly entitiesGroups: EntitiesGroupsService,
    private readonly rephraser: QueryRephraser,
  ) {}

  async search(req: RetrievalRequest<SearchRequest>): Promise<SearchResponse> {
    const started = Date.now();
    const plan = await this.planner.plan(req, { defaultFeatures: SEARCH_DEFAULT_FEATURES, rephrase: true });
    // As on /find: retrieval (keyword, semantic, relations) uses the rephrased query; the lists report the caller's.
    await this.rephraser.rephrasePlan(plan, { generativeModel: req.body.generative_model });
    const query = plan.originalQuery ?? plan.query;
    const features = plan.features;
    const faceted = req.body.faceted ?? [];
    const offset = req.body.offset ?? 0;
    const languages = await this.context.kbLanguages(req.kbid);
    const terms = await this.retriever.keywordTerms(plan, languages);
    const want = offset + plan.topK;
    const retrieval = this.retriever.retrieval(plan);
    const keywordHits =
      features.includes('keyword') || features.includes('fulltext')
        ? await retrieval.keyword(terms, Math.max(want + 1, 200), plan.minBm25)
        : [];
    let semanticHits: RetrieverHit[] = [];
    let minSemantic = plan.minSemantic ?? 0;
    if (features.includes('semantic') && (plan.query.trim() || plan.vector)) {
      const q = await this.retriever.queryVector(plan);
      minSemantic = plan.minSemantic ?? q.threshold;
      semanticHits = await retrieval.semantic({
        vector: q.vector,
        vectorset: q.vectorset,
        similarity: q.similarity,
        minScore: minSemantic,
        limit: want + 1,
      });
    }
    plan.signal?.throwIfAborted();
    const rows = await this.repository.paragraphRows([...new Set([...keywordHits.slice(0, 200), ...semanticHits].map((h) => h.id))]);
    const termSet = new Set(terms);
    const paragraphText = (p: ParagraphRow) => (plan.highlight ? highlight(p.text, p.language, termSet) : p.text);
    const facets = faceted.length ? await this.facets(plan, retrieval, faceted, terms) : {};
    const out: Omit<SearchResponse, 'resources'> = { nodes: null, shards: null, autofilters: [] };
    if (features.includes('relations')) out.relations = await this.repository.relations(plan);
    const rids = new Set<string>();
    if (features.includes('keyword')) {
      const page = keywordHits
        .slice(offset, want)
        .map((h) => ({ h, p: rows.get(h.id) }))
        .filter((x): x is { h: RetrieverHit; p: ParagraphRow } => !!x.p);
      page.forEach((x) => rids.add(x.p.rid));
      out.paragraphs = {
        results: page.map(({ h, p }) => ({
          score: h.score,
          rid: p.rid,
          ...fieldParts(p),
          text: paragraphText(p),
          labels: stripL(p.labels),
          ...seconds(p),
          position: paragraphPosition(p),
          fuzzy_result: false,
        })),
        facets,
        query,
        total: keywordHits.length,
        page_number: Math.floor(offset / plan.topK),
        page_size: plan.topK,
        next_page: keywordHits.length > want,
        min_score: plan.minBm25,
      };
    }
    if (features.includes('fulltext')) {
      const byField = new Map<string, { score: number; p: ParagraphRow }>();
      for (const h of keywordHits) {
        const p = rows.get(h.id);
        if (!p) continue;
        const key = `${p.rid}/${p.field}`;
        const prev = byField.get(key);
        if (!prev) byField.set(key, { score: h.score, p });
        else prev.score += h.score * 0.1; // more matching paragraphs nudge a field up
      }
      const fields = [...byField.values()].sort((a, b) => b.score - a.score);
      const page = fields.slice(offset, want);
      page.forEach((x) => rids.add(x.p.rid));
      out.fulltext = {
        results: page.map(({ score, p }) => ({ score, rid: p.rid, ...fieldParts(p), labels: stripL(p.labels) })),
        facets,
        query,
        total: fields.length,
        page_number: Math.floor(offset / plan.topK),
        page_size: plan.topK,
        next_page: fields.length > want,
        min_score: plan.minBm25,
      };
    }
    if (features.includes('semantic')) {
      const page = semanticHits
        .slice(offset, want)
        .map((h) => ({ h, p: rows.get(h.id) }))
        .filter((x): x is { h: RetrieverHit; p: ParagraphRow } => !!x.p);
      page.forEach((x) => rids.add(x.p.rid));
      out.sentences = {
        results: page.map(({ h, p }) => ({
          score: h.score,
          rid: p.rid,
          text: p.text,
          ...fieldParts(p),
          index: String(p.idx),
          position: paragraphPosition(p),
        })),
        facets: {},
        page_number: Math.floor(offset / plan.topK),
        page_size: plan.topK,
        min_score: minSemantic,
      };
    }
    plan.signal?.throwIfAborted();
    const resources = await this.repository.resources(req.kbid, [...rids], plan.serialization);
    const rephrased = plan.originalQuery !== undefined ? { rephrased_query: plan.query } : {};
    this.auditor.audit(
      req,
      'search',
      started,
      { query, ...(plan.originalQuery !== undefined ? { rephrased_question: plan.query } : {}), features, resources_count: rids.size },
      plan.auditMetadata,
    );
    return { ...out, resources: Object.fromEntries(resources), ...rephrased };
  }

  /**
   * Paragraph facets over the paragraphs the query matches (any query term), counted per resource:
   * by the memory index when it is current and decides the plan's filter, else in SQL.
   */
  private async facets(
    plan: FindPlan,
    retrieval: PlanRetrieval,
    prefixes: string[],
    terms: string[],
  ): Promise<Record<string, Record<string, number>>> {
    const held = await retrieval.masked();
    if (held) return memoryFacets(held.index, prefixes, held.mask, terms);
    const params = new SqlParams(plan.params.values);
    const termCond = terms.length
      ? ` AND EXISTS (SELECT 1 FROM content.search_postings po WHERE po.kbid = ${params.add(plan.kbid)} AND po.paragraph = p.id AND po.term = ANY(${params.add(terms)}::text[]))`
      : '';
    return facetCounts(
      this.ds.manager,
      { from: 'content.search_paragraphs p', tags: 'p.tags', counted: 'p.rid', where: plan.where + termCond, params },
      prefixes,
    );
  }

  /** Entities (`/e/{family}/{value}` tags) of the paragraphs the plan lets through whose value starts with `prefix`: memory index or SQL. */
  private async entityTags(plan: FindPlan, retrieval: PlanRetrieval, prefix: string): Promise<string[]> {
    const held = await retrieval.masked();
    if (held) {
      return memoryTags(
        held.index,
        held.mask,
        (t) => t.startsWith('/e/') && (t.slice(3).split('/')[1] ?? '').toLowerCase().startsWith(prefix),
        ENTITY_SUGGESTIONS,
      );
    }
    const p = new SqlParams(plan.params.values);
    const rows = (await this.ds.query(
      `SELECT DISTINCT tg COLLATE "C" AS tag FROM content.search_paragraphs p, unnest(p.tags) AS tg
        WHERE ${plan.where} AND tg LIKE '/e/%' AND lower(split_part(substr(tg, 4), '/', 2)) LIKE ${p.add(likePrefix(prefix))}
        ORDER BY 1 LIMIT ${ENTITY_SUGGESTIONS}`,
      p.values,
    )) as { tag: string }[];
    return rows.map((r) => r.tag);
  }

  async suggest(req: RetrievalRequest<SuggestRequest>): Promise<SuggestResponse> {
    const started = Date.now();
    const features = distinctOr(req.body.features, SUGGEST_FEATURES);
    // The paragraphs are retrieved by keyword, ten at most (`features` names the lists, `top_k` has no effect).
    const plan = await this.planner.plan(
      { ...req, body: { ...req.body, features: undefined, top_k: 10 } },
      { defaultFeatures: ['keyword'] },
    );
    const query = plan.query.trim();
    // (one read of the KB's index generation for both lists)
    const retrieval = this.retriever.retrieval(plan);
    const out: SuggestResponse = { shards: null };
    if (features.includes('paragraph')) {
      const languages = await this.context.kbLanguages(req.kbid);
      const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      const last = words[words.length - 1] ?? '';
      const terms = new Set(analyzeQuery(query, languages));
      // The word being typed: every indexed term it starts (most frequent first) also counts.
      if (last) {
        const expansions = (await this.ds.query(
          `SELECT term FROM content.search_terms WHERE kbid = $1 AND term LIKE $2 ORDER BY df DESC LIMIT 20`,
          [req.kbid, likePrefix(last)],
        )) as { term: string }[];
        for (const e of expansions) terms.add(e.term);
      }
      const hits = await retrieval.keyword([...terms], 10, 0);
      const rows = await this.repository.paragraphRows(hits.map((h) => h.id));
      const termSet = new Set(terms);
      out.paragraphs = {
        results: hits
          .map((h) => ({ h, p: rows.get(h.id) }))
          .filter((x): x is { h: RetrieverHit; p: ParagraphRow } => !!x.p)
          .map(({ h, p }) => ({
            score: h.score,
            rid: p.rid,
            ...fieldParts(p),
            text: plan.highlight ? highlight(p.text, p.language, termSet) : p.text,
            labels: stripL(p.labels),
            ...seconds(p),
            position: paragraphPosition(p),
            fuzzy_result: !analyzeQuery(query, languages).every((t) => termSet.has(t)),
          })),
        facets: {},
        query,
        total: hits.length,
        page_number: 0,
        page_size: 10,
        next_page: false,
        min_score: 0,
      };
    }
    if (features.includes('entities')) {
      const found = (await this.entityTags(plan, retrieval, query.toLowerCase())).map((tag) => {
        const [family, ...value] = tag.slice(3).split('/');
        return { family: family as string, value: value.join('/') };
      });
      // Users' entities groups: their deletions hide found entities, their own entities are suggested too.
      const entities = await this.entitiesGroups.suggestions(req.kbid, query.toLowerCase(), found, ENTITY_SUGGESTIONS);
      out.entities = { total: entities.length, entities };
    }
    this.auditor.audit(req, 'suggest', started, { query, features });
    return out;
  }
}

/** A paragraph result's `start_seconds` / `end_seconds` lists: one entry for a timed (TRANSCRIPT) paragraph, else none. */
function seconds(p: ParagraphRow): { start_seconds: number[]; end_seconds: number[] } {
  return p.start_seconds === null || p.start_seconds === undefined
    ? { start_seconds: [], end_seconds: [] }
    : { start_seconds: [p.start_seconds], end_seconds: p.end_seconds === null || p.end_seconds === undefined ? [] : [p.end_seconds] };
}
