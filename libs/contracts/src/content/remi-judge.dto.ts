import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, MaxLength, ValidateNested } from 'class-validator';

/**
 * Bounds of one LLM-judge request (`content.remi.judge`, docs/remi.md): the reporting service cuts
 * what it sends to fit, the content service refuses anything larger. About 25,000 characters of
 * prompt at most, whatever the answer.
 */
export const REMI_JUDGE_LIMITS = {
  questionChars: 2_000,
  sentences: 50,
  sentenceChars: 400,
  pieces: 50,
  pieceChars: 2_000,
  /** All context pieces together; with many pieces each is cut shorter. */
  contextChars: 16_000,
} as const;

export class RemiJudgePiece {
  @IsString() @MaxLength(300) key!: string;
  @IsString() @MaxLength(REMI_JUDGE_LIMITS.pieceChars) text!: string;
}

/** Grade one `/ask` answer with the KB's own generative model (internal: reporting → content). */
export class RemiJudgeRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(REMI_JUDGE_LIMITS.questionChars) question!: string;
  /** The answer's sentences, as the offline scorer splits them: one groundedness score each. */
  @IsArray()
  @ArrayMaxSize(REMI_JUDGE_LIMITS.sentences)
  @IsString({ each: true })
  @MaxLength(REMI_JUDGE_LIMITS.sentenceChars, { each: true })
  sentences!: string[];
  /** The context given to the generator, in its order: one context relevance score each. */
  @IsArray()
  @ArrayMaxSize(REMI_JUDGE_LIMITS.pieces)
  @ValidateNested({ each: true })
  @Type(() => RemiJudgePiece)
  context!: RemiJudgePiece[];
}

/** Why a judge gave no scores: the provider's failure kind, `malformed` (no usable JSON), `config`, `unavailable`. */
export type RemiJudgeError =
  'timeout' | 'rate_limited' | 'auth' | 'provider' | 'bad_request' | 'aborted' | 'malformed' | 'config' | 'unavailable';

export type RemiJudgeResponse =
  | {
      outcome: 'judged';
      /** The provider's model id. */
      model: string;
      answer_relevance: { score: number; reason: string };
      context_relevance: number[];
      groundedness: number[];
    }
  /** The KB has no generative provider (the built-in extractive model): scored offline. */
  | { outcome: 'no_provider' }
  | { outcome: 'failed'; model: string | null; error: RemiJudgeError };

/**
 * Context pieces cut to the judge's bounds: at most `pieces` of them, each at most `pieceChars`
 * and all together at most `contextChars` (with many pieces, each gets an equal share).
 */
export function fitJudgeContext<T extends { key: string; text: string }>(pieces: readonly T[]): { key: string; text: string }[] {
  const kept = pieces.slice(0, REMI_JUDGE_LIMITS.pieces);
  const share = Math.min(REMI_JUDGE_LIMITS.pieceChars, Math.floor(REMI_JUDGE_LIMITS.contextChars / Math.max(1, kept.length)));
  return kept.map((p) => ({ key: p.key.slice(0, 300), text: p.text.slice(0, share) }));
}
