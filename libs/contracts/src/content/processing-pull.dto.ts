import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const MAX_PULL_LIMIT = 50;

/**
 * Bus request of the understanding API's Pull (`content.processing.pull`): the gateway resolved the
 * KBs of the client's account and the client's partitions.
 */
export class ProcessingPullRequest {
  @IsDefined() @IsArray() @ArrayMaxSize(10_000) @IsString({ each: true }) kbids!: string[];
  /** `v1`: stateless, from `from_cursor`; `v2`: the consumer's acknowledged position, with a lease. */
  @IsDefined() @IsIn(['v1', 'v2']) mode!: 'v1' | 'v2';
  /** The pulling client (its internal id): v2 keeps its position. */
  @IsDefined() @IsString() @MaxLength(100) consumer!: string;
  @IsDefined() @IsInt() @Min(1) @Max(MAX_PULL_LIMIT) limit!: number;
  @IsOptional() @IsInt() @Min(0) from_cursor?: number;
  /** 1-based: with `partitions` > 1, only the messages of resources hashed to this partition. */
  @IsOptional() @IsInt() @Min(1) partition?: number;
  @IsDefined() @IsInt() @Min(1) @Max(1024) partitions!: number;
  /** v2: ack tokens of messages handled (cumulative: acknowledging one acknowledges those before it). */
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true }) ack?: string[];
  /** v2: how long delivered messages stay leased to this consumer before they are delivered again. */
  @IsOptional() @IsInt() @Min(1) @Max(3600) ttl_s?: number;
}

/** One processed job, as Pull delivers it. */
export class PulledMessageDto {
  /** Position in the account's stream of completed jobs (monotonic). */
  @ApiProperty() seq!: number;
  @ApiProperty() processing_id!: string;
  /** base64 of the UTF-8 JSON document described in docs/decisions/0009 (processing result). */
  @ApiProperty() payload!: string;
  @ApiProperty() ack_token!: string;
}

export class ProcessingPullResult {
  messages!: PulledMessageDto[];
  /** The last position delivered (or the one the request started from, when nothing was). */
  cursor!: number;
  /** Completed jobs after `cursor` still to pull (counted up to 1000). */
  pending!: number;
}

/** `GET /api/v1/processing/pull` (API-MAP §1.5, the reference's v1 shape). */
export class PullV1ResponseDto {
  @ApiProperty({ enum: ['ok', 'empty'] }) status!: 'ok' | 'empty';
  /** The first message's payload, or null. */
  @ApiPropertyOptional({ type: String, nullable: true }) payload!: string | null;
  @ApiProperty({ type: [String] }) payloads!: string[];
  /** processing_id of the last message, or null. */
  @ApiPropertyOptional({ type: String, nullable: true }) msgid!: string | null;
  /** Pass it as `from_cursor` to continue after these messages. */
  @ApiProperty() cursor!: number;
}

/** `POST /api/v2/processing/pull` body. */
export class PullV2BodyDto {
  @ApiPropertyOptional({ description: 'long-poll seconds (0–30)', default: 0 }) @IsOptional() @IsInt() @Min(0) @Max(30) timeout?: number;
  @ApiPropertyOptional({ default: 1, maximum: MAX_PULL_LIMIT }) @IsOptional() @IsInt() @Min(1) @Max(MAX_PULL_LIMIT) limit?: number;
  @ApiPropertyOptional({ type: [String], description: 'ack tokens of handled messages' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  ack?: string[];
}

export class PullV2MessageDto {
  @ApiProperty() payload!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) headers!: Record<string, string>;
  @ApiProperty() ack_token!: string;
  @ApiProperty() seq!: number;
}

export class PullV2ResponseDto {
  @ApiProperty({ type: [PullV2MessageDto] }) messages!: PullV2MessageDto[];
  /** Seconds the delivered messages stay leased before they are delivered again unless acknowledged. */
  @ApiProperty() ttl!: number;
  @ApiProperty() pending!: number;
}
