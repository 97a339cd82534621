import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength, IsBoolean } from 'class-validator';

/** A search query to embed with a KB's semantic model (the query prompt applies). */
export class EmbedQueryRequest {
  @IsString() kbid!: string;
  @IsString() @MaxLength(20_000) text!: string;
  /** A vectorset (semantic model) name; absent → the KB's default. */
  @IsOptional() @IsString() vectorset?: string;
  /**
   * Work nobody is waiting for (REMi's scoring of answers): it waits behind the queries of /find and
   * /ask for the built-in model, and its vectors are not cached with theirs.
   */
  @IsOptional() @IsBoolean() background?: boolean;
}

export interface EmbedQueryResponse {
  vectorset: string;
  vector: number[];
  similarity: 'COSINE' | 'DOT';
  /** The model's default semantic min_score. */
  threshold: number;
}

/**
 * Bounds of one cross-encoder call (`understanding.query.rerank`): the reranker's window at most (200
 * paragraphs), each cut to RERANK_LIMITS.textChars by the caller (a cross-encoder reads 512 tokens
 * at most, about 2 000 characters), the query to RERANK_LIMITS.queryChars.
 */
export const RERANK_LIMITS = { texts: 200, textChars: 4_000, queryChars: 2_000 } as const;

/** A query and the paragraphs to score against it with the cross-encoder reranker's model. */
export class RerankRequest {
  @IsString() @MaxLength(RERANK_LIMITS.queryChars) query!: string;
  @IsArray()
  @ArrayMaxSize(RERANK_LIMITS.texts)
  @IsString({ each: true })
  @MaxLength(RERANK_LIMITS.textChars, { each: true })
  texts!: string[];
}

export interface RerankResponse {
  /** The model's name (its folder's). */
  model: string;
  /** One score per text, in the texts' order, in [0, 1]; higher is more relevant. */
  scores: number[];
}
