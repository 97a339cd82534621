import { DomainError, ErrorCodes, RERANK_LIMITS } from '@kb/contracts';
import { byScores, type RerankCandidate, type Reranker, type RerankQuery } from './rerank';

/** Scores of texts for a query by a cross-encoder model, in the texts' order (the understanding service's `understanding.query.rerank`). */
export type CrossEncoderScores = (query: string, texts: string[], signal?: AbortSignal) => Promise<number[]>;

/**
 * `cross-encoder`: the candidates in the order of a model that reads query and paragraph together,
 * run where the models run (the understanding service, RERANKER_MODEL_DIR), never on this event
 * loop. One call per reranking: the window is at most RERANK_LIMITS.texts paragraphs, each cut to
 * RERANK_LIMITS.textChars (a cross-encoder reads 512 tokens at most). Its scores replace the fused
 * ones. Not configured there: the call answers 422; a model that fails: 503.
 */
export class CrossEncoderReranker implements Reranker {
  readonly name = 'cross-encoder';

  constructor(private readonly scores: CrossEncoderScores) {}

  async rerank(query: RerankQuery, candidates: RerankCandidate[]): Promise<RerankCandidate[]> {
    if (!candidates.length) return candidates;
    const head = candidates.slice(0, RERANK_LIMITS.texts);
    const scores = await this.scores(
      query.text.slice(0, RERANK_LIMITS.queryChars),
      head.map((c) => c.text.slice(0, RERANK_LIMITS.textChars)),
      query.signal,
    );
    if (scores.length !== head.length || scores.some((s) => typeof s !== 'number' || !Number.isFinite(s))) {
      throw new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, 'the cross-encoder reranker answered scores that do not match the paragraphs');
    }
    return [...byScores(head, scores), ...candidates.slice(head.length)];
  }
}
