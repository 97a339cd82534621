import { Injectable } from '@nestjs/common';
import type { ResourceDto } from '@kb/contracts';
import { fuseGraph, rrf, weightedFusion, type FusedHit } from '../query/fusion';
import { LexicalReranker, NOOP_RERANKER, type Reranker } from '../query/rerank';
import { CrossEncoderReranker } from '../query/cross-encoder-reranker';
import { SearchContextService } from '../search-context.service';
import type { FindPlan } from './find-plan';
import type { Retrieved } from './find-retrieval';
import { SearchRepository, type ParagraphRow, type RankedParagraph } from './search.repository';

/**
 * Default fusion per semantic model when the request names none (docs/decisions/0012). Weak
 * models get a small weight in score fusion so hybrid never falls below keyword alone; unknown
 * (presumably strong, configured) models get equal-weight RRF. The built-in model's weight was
 * fitted on SciFact *train* (nDCG@10: 0.05 → 0.704, 0.1 → 0.705, 0.2 → 0.706, keyword 0.702);
 * these are within 0.002, and the middle of that band was kept: less semantic influence is safer
 * on collections the model knows nothing about (docs/benchmarks.md).
 */
export const DEFAULT_FUSION: Record<string, { weight: number }> = {
  'en-use-lite-2024': { weight: 0.1 },
};

/** Merging's outcome: the top_k paragraphs, and with `resources` asked, their resources as read beside the first rows. */
export interface Merged {
  paragraphs: RankedParagraph[];
  /** The resources of the first paragraphs read (undefined if that read failed: read them again). */
  resources?: Promise<Map<string, ResourceDto> | undefined>;
}

/**
 * Merging: the retrievers' lists fused into one order (RRF or score fusion, the graph's hits
 * joined), the best reordered by the reranker, duplicates collapsed, top_k paragraphs with their rows.
 */
@Injectable()
export class FindMerge {
  /** The rerankers by name: the built-in `predict`, `noop`, and `cross-encoder` (a model the understanding service runs). */
  private readonly rerankers: Record<FindPlan['reranker'], Reranker>;

  constructor(
    private readonly repository: SearchRepository,
    context: SearchContextService,
  ) {
    this.rerankers = {
      predict: new LexicalReranker(),
      noop: NOOP_RERANKER,
      'cross-encoder': new CrossEncoderReranker((q, texts, signal) => context.crossEncoderScores(q, texts, signal)),
    };
  }

  /** The reranker of a name (the graph_beta strategy of /ask ranks relation texts with the request's). */
  reranker(name: FindPlan['reranker']): Reranker {
    return this.rerankers[name];
  }

  /**
   * The top_k paragraphs, best first. With `resources`, the resources of the first paragraphs read
   * are read at the same time as their rows (rendering then rarely waits for another statement).
   */
  async merge(plan: FindPlan, retrieved: Retrieved, o: { resources?: boolean } = {}): Promise<Merged> {
    const fused = fuseGraph(this.fuse(plan, retrieved), retrieved.graphHits);
    const fusedCandidates = fused.slice(0, Math.max(plan.topK * 3, plan.topK + 20, plan.rerankWindow));
    // Paragraph rows are read as they are reached, top_k at first: most requests need no more
    // (a duplicate or a paragraph deleted meanwhile costs one more read), and the texts of the
    // spare candidates are no longer shipped from the database for nothing. The reranker reads the
    // rows of the candidates it reorders (its window) before that.
    const rows = new Map<string, ParagraphRow>();
    let resources: Merged['resources'];
    const readRows = async (ids: string[]): Promise<void> => {
      if (o.resources && !resources && ids.length > 0) {
        // (a failed read is read again by the renderer: never an unhandled rejection)
        resources = this.repository.resourcesOfParagraphs(plan.kbid, ids, plan.serialization).catch(() => undefined);
      }
      for (const [id, row] of await this.repository.paragraphRows(ids)) rows.set(id, row);
    };
    const { candidates, read: reranked } = await this.rerank(plan, fusedCandidates, rows, readRows);
    let read = reranked;
    const out: RankedParagraph[] = [];
    const seen = new Map<string, Set<string>>();
    for (let i = 0; i < candidates.length; i++) {
      const h = candidates[i] as FusedHit;
      if (i >= read) {
        plan.signal?.throwIfAborted();
        const more = candidates.slice(read, read + (read === 0 ? plan.topK - out.length : Math.max(2 * (plan.topK - out.length), 10)));
        await readRows(more.map((x) => x.id));
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
    return { paragraphs: out, resources };
  }

  /** The keyword and semantic lists in one order, as the request (or the model's default) asks. */
  private fuse(plan: FindPlan, r: Retrieved): FusedHit[] {
    if (plan.fusion.name === 'rrf') return rrf(r.keywordHits, r.semanticHits, plan.fusion);
    if (plan.fusion.name === 'weighted')
      return weightedFusion(r.keywordHits, r.semanticHits, {
        weight: plan.fusion.weight,
        window: plan.fusion.window,
        floor: r.minSemantic,
      });
    const d = DEFAULT_FUSION[r.vectorset];
    return d
      ? weightedFusion(r.keywordHits, r.semanticHits, { weight: d.weight, window: r.window, floor: r.minSemantic })
      : rrf(r.keywordHits, r.semanticHits, { k: 60, window: r.window, boosting: { keyword: 1, semantic: 1 } });
  }

  /**
   * The reranker's order of the best `rerankWindow` candidates (with its scores), the rest after
   * them; `read` is how many leading candidates have their rows in `rows` already.
   */
  private async rerank(
    plan: FindPlan,
    candidates: FusedHit[],
    rows: Map<string, ParagraphRow>,
    readRows: (ids: string[]) => Promise<void>,
  ): Promise<{ candidates: FusedHit[]; read: number }> {
    const reranker = this.rerankers[plan.reranker];
    if (reranker === NOOP_RERANKER || !plan.query.trim()) return { candidates, read: 0 };
    const window = candidates.slice(0, plan.rerankWindow);
    await readRows(window.map((h) => h.id));
    const head = window.filter((h) => rows.has(h.id));
    const byId = new Map(head.map((h) => [h.id, h]));
    const reranked = await reranker.rerank(
      { text: plan.query, signal: plan.signal },
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
}
