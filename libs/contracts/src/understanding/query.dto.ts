import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';

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
  /**
   * `float32`: the answer carries the vector in `vector_f32` (its float32 values, little-endian, in
   * base64) and `vector` is empty. A tenth of the text of a JSON number array, and neither side
   * prints or parses 512 numbers; the values are those a float32 index compares anyway.
   */
  @IsOptional() @IsIn(['float32']) encoding?: 'float32';
}

export interface EmbedQueryResponse {
  vectorset: string;
  vector: number[];
  similarity: 'COSINE' | 'DOT';
  /** The model's default semantic min_score. */
  threshold: number;
  /** With `encoding: 'float32'`: the vector (see `encodeFloat32`); `vector` is then empty. */
  vector_f32?: string;
}

/** A vector as its float32 values, little-endian, in base64 (`EmbedQueryRequest.encoding`). */
export function encodeFloat32(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString('base64');
}

/** The numbers of `encodeFloat32`'s text; throws on text that is not a whole number of float32 values. */
export function decodeFloat32(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw new RangeError(`a float32 vector has a multiple of 4 bytes, not ${bytes.length}`);
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
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

/** Longest side of a rendered PDF page image (`understanding.pdf-page.render`), in pixels. */
export const PDF_PAGE_IMAGE_PX = 1024;

/**
 * A page of a file field's stored PDF to render as an image (/ask's page_image). It names the
 * field, not a blob key: the service reads only that field's kept original.
 */
export class PdfPageImageRequest {
  @IsUUID() kbid!: string;
  @IsUUID() rid!: string;
  @IsString() @Matches(/^[a-zA-Z0-9:_-]{1,250}$/) field_id!: string;
  @IsInt() @Min(1) @Max(100_000) page!: number;
}

export interface PdfPageImageResponse {
  /** A PNG of at most PDF_PAGE_IMAGE_PX on its longest side, in base64; null when the field keeps no PDF or has no such page. */
  image: { content_type: 'image/png'; b64encoded: string } | null;
}
