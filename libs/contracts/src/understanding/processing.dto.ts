import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { ContentFieldTypes, type ContentFieldType } from '../content/resource.dto';
import { WebhookTargetDto } from './webhook.dto';

/**
 * One field to process. The value travels inline for text-like fields; file bytes never ride the
 * bus: `value.file.uri` names the blob (or external address) the worker reads.
 */
export class ProcessFieldJob {
  @IsString() processing_id!: string;
  @IsString() kbid!: string;
  @IsString() rid!: string;
  @IsIn(ContentFieldTypes) field_type!: ContentFieldType;
  @IsString() field_id!: string;
  /** Sequence of the write that produced this job: results for older writes are ignored. */
  @IsInt() @Min(0) seqid!: number;
  @IsDefined() @IsObject() value!: Record<string, unknown>;
  @IsOptional() @IsString() title?: string;
  @IsOptional() @IsString() language?: string;
  /** Labels of the request that scheduled the job (a push's `labels`), shown on its status record. */
  @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) labels?: string[];
  /** Called when the job completes or fails (a push's webhook); kept on its status record. */
  @IsOptional() @ValidateNested() @Type(() => WebhookTargetDto) webhook?: WebhookTargetDto;
  /** The understanding-API client whose key scheduled the job (a push): its processing is metered under that key. */
  @IsOptional() @IsUUID() nua_key_id?: string;
}

export class ProcessFieldErrorDto {
  @IsString() body!: string;
  @IsInt() code!: number;
  @IsString() code_str!: string;
}

/**
 * Where a field's processing artefacts live: content's namespace, so deleting the resource
 * deletes them with its other blobs.
 */
export function fieldBlobPrefix(ids: { kbid: string; rid: string; field_type: string; field_id: string }): string {
  return `content/kbs/${ids.kbid}/r/${ids.rid}/f/${ids.field_type}/${ids.field_id}/`;
}

/** The full extracted result of one processed write of a field (JSON, `ExtractedFieldData`). */
export function extractedBlobKey(ids: { kbid: string; rid: string; field_type: string; field_id: string; seqid: number }): string {
  return `${fieldBlobPrefix(ids)}extracted/${ids.seqid}.json`;
}

/**
 * The thumbnail processing made for one write of a field: one key per write (as the extracted
 * JSON), so a worker late with an older write's job never overwrites the thumbnail of a newer
 * result already applied; content deletes the older one (docs/usage.md, "Stored bytes").
 */
export function thumbnailBlobKey(ids: { kbid: string; rid: string; field_type: string; field_id: string; seqid: number }): string {
  return `${fieldBlobPrefix(ids)}thumbnails/${ids.seqid}`;
}

/**
 * Announces that a field was processed. The result itself (text, metadata, vectors) can be
 * megabytes, so it is written to the blob store first and only its key rides the bus.
 */
export class FieldProcessedResult {
  @IsString() processing_id!: string;
  @IsString() kbid!: string;
  @IsString() rid!: string;
  @IsIn(ContentFieldTypes) field_type!: ContentFieldType;
  @IsString() field_id!: string;
  @IsInt() @Min(0) seqid!: number;
  /** Blob key of the `ExtractedFieldData` JSON; absent when processing failed (then `error` says why). */
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  @Matches(/^content\/kbs\/[^/]+\/r\/[^/]+\/f\/[^/]+\/[^/]+\/extracted\/\d+\.json$/)
  extracted_key?: string;
  @IsOptional() @ValidateNested() @Type(() => ProcessFieldErrorDto) error?: ProcessFieldErrorDto;
  /**
   * Bytes of each blob the worker stored for this result (the extracted JSON, a thumbnail), by key,
   * as written: content records them on the field and meters them as `storage_bytes`. Keys outside
   * the field's prefix and values that are not whole byte counts are ignored there.
   */
  @IsOptional() @IsObject() stored_bytes?: Record<string, number>;
  /** Deliveries of the job before the one that produced this result (failed attempts retried). */
  @IsOptional() @IsInt() @Min(0) retries?: number;
}

/** One vector of a field (spec 2.3 `vectors`): its span, and the paragraph it belongs to. */
export interface ExtractedVector {
  start: number;
  end: number;
  start_paragraph: number;
  end_paragraph: number;
  vector: number[];
}

/** The blob named by `extracted_key`: the field's `extracted` record (spec 2.3), vectors included. */
export interface ExtractedFieldData {
  text: { text: string; split_text: Record<string, string>; deleted_splits: string[] };
  metadata: { metadata: Record<string, unknown>; split_metadata: Record<string, Record<string, unknown>>; deleted_splits: string[] };
  vectors: {
    vectors: { vectors: ExtractedVector[] };
    split_vectors: Record<string, { vectors: ExtractedVector[] }>;
    deleted_splits: string[];
    /** The semantic model (vectorset) that computed the vectors, with its similarity and length. */
    vectorset?: string;
    similarity?: 'COSINE' | 'DOT';
    dimension?: number;
  };
  /** The vectors of the KB's other semantic models, by vectorset (`vectors` holds the default model's). */
  vectorsets?: Record<string, ExtractedFieldData['vectors']>;
  file?: Record<string, unknown>;
  link?: Record<string, unknown>;
  /**
   * Seconds of audio and video transcribed for this field (the recording of a file or link field,
   * the voice messages of a conversation), for usage. Not part of the served `extracted` record.
   */
  media_seconds?: number;
  /** Wall-clock seconds the extraction of this field took in the worker (pre-processing time, for usage). Not served either. */
  processing_seconds?: number;
}
