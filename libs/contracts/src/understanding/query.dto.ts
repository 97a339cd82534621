import { IsOptional, IsString, MaxLength } from 'class-validator';

/** A search query to embed with a KB's semantic model (the query prompt applies). */
export class EmbedQueryRequest {
  @IsString() kbid!: string;
  @IsString() @MaxLength(20_000) text!: string;
  /** A vectorset (semantic model) name; absent → the KB's default. */
  @IsOptional() @IsString() vectorset?: string;
}

export interface EmbedQueryResponse {
  vectorset: string;
  vector: number[];
  similarity: 'COSINE' | 'DOT';
  /** The model's default semantic min_score. */
  threshold: number;
}
