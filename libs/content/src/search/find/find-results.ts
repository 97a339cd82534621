import { Injectable } from '@nestjs/common';
import type { FindParagraph, FindResource, FindResponse, ResourceDto } from '@kb/contracts';
import { tokenize } from '../analysis';
import type { RelationsResult } from '../query/relations';
import type { FindPlan } from './find-plan';
import { SearchRepository, type ParagraphRow, type RankedParagraph } from './search.repository';

export interface FindOutcome {
  plan: FindPlan;
  paragraphs: RankedParagraph[];
  minScore: { semantic: number; bm25: number };
  terms: string[];
  timings: Record<string, number>;
  /** The `relations` feature's result, when asked for. */
  relations?: RelationsResult;
  /** Resources read beside the paragraphs' rows (FindMerge): rendering reads only those missing. */
  resources?: Promise<Map<string, ResourceDto> | undefined>;
}

/** Result rendering: the KnowledgeboxFindResults shape of API-MAP 2.2 (/find, and /ask's `retrieval` item). */
@Injectable()
export class FindResults {
  constructor(private readonly repository: SearchRepository) {}

  async render(outcome: FindOutcome): Promise<FindResponse> {
    const { plan, paragraphs } = outcome;
    const rids = [...new Set(paragraphs.map((p) => p.rid))];
    const resources = (await outcome.resources) ?? new Map<string, ResourceDto>();
    const missing = rids.filter((rid) => !resources.has(rid));
    if (missing.length > 0)
      for (const [rid, r] of await this.repository.resources(plan.kbid, missing, plan.serialization)) resources.set(rid, r);
    const termSet = new Set(outcome.terms);
    const out: Record<string, FindResource> = {};
    for (const p of paragraphs) {
      const resource = resources.get(p.rid);
      if (!resource) continue;
      const entry = (out[p.rid] ??= { ...resource, fields: {} });
      const fieldKey = `/${p.field}`;
      (entry.fields[fieldKey] ??= { paragraphs: {} }).paragraphs[p.paragraph_id] = paragraphJson(p, plan.highlight ? termSet : null);
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
}

export function paragraphJson(p: RankedParagraph, highlightTerms: Set<string> | null): FindParagraph {
  return {
    score: p.score,
    score_type: p.scoreType,
    order: p.order,
    text: highlightTerms ? highlight(p.text, p.language, highlightTerms) : p.text,
    id: p.paragraph_id,
    labels: p.labels,
    position: paragraphPosition(p),
    fuzzy_result: false,
    page_with_visual: false,
    reference: null,
    is_a_table: p.kind === 'TABLE',
    relevant_relations: null,
  };
}

/** Wraps the words of `text` whose analysed term is a query term in `<mark>…</mark>`. */
/** Where a paragraph is in its field, as /find and /search answer it (`start_seconds`/`end_seconds` null unless timed). */
export function paragraphPosition(p: ParagraphRow): FindParagraph['position'] {
  return {
    page_number: p.page ?? 0,
    index: p.idx,
    start: p.start_offset,
    end: p.end_offset,
    start_seconds: p.start_seconds ?? null,
    end_seconds: p.end_seconds ?? null,
  };
}

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
