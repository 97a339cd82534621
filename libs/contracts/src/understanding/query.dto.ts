import { IsOptional, IsString, MaxLength, IsBoolean } from 'class-validator';

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
