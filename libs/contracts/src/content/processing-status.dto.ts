import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** `GET /kb/{kbid}/processing-status` (API-MAP §3): the KB's processing status records, newest first. */
export class ProcessingStatusRequest {
  @IsString() kbid!: string;
  /** Opaque cursor from the previous page. */
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @IsOptional() @IsBoolean() scheduled?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
}

/** Spec 2.7 "Processing status record". */
export class ProcessingStatusRecord {
  @ApiProperty() processing_id!: string;
  @ApiProperty() resource_id!: string;
  @ApiProperty() kbid!: string;
  @ApiProperty() title!: string;
  @ApiProperty({ type: [String] }) labels!: string[];
  @ApiProperty() completed!: boolean;
  @ApiProperty() scheduled!: boolean;
  @ApiProperty() timestamp!: string;
  @ApiProperty({ type: 'string', nullable: true }) completed_at!: string | null;
  @ApiProperty() scheduled_at!: string;
  @ApiProperty() failed!: boolean;
  @ApiProperty() retries!: number;
  /** Seconds until processing is expected to start (0 when done or next). */
  @ApiProperty({ description: 'Seconds until processing is expected to start (0 when done or next)' }) schedule_eta!: number;
  /** Position in the processing queue (1 = next); 0 once completed. */
  @ApiProperty({ description: 'Position in the processing queue (1 = next); 0 once completed' }) schedule_order!: number;
  /** The field processed: `{field_type}/{field_id}`. */
  @ApiProperty({ description: 'The field processed: `{field_type}/{field_id}`' }) request!: string;
  /** The error of a failed job; empty otherwise. */
  @ApiProperty({ description: 'The error of a failed job; empty otherwise' }) response!: string;
}

export class ProcessingStatusPage {
  @ApiProperty({ type: [ProcessingStatusRecord] }) results!: ProcessingStatusRecord[];
  /** Cursor of the next page; null on the last. */
  @ApiProperty({ type: 'string', nullable: true, description: 'Cursor of the next page; null on the last' }) cursor!: string | null;
}

/** The understanding API's `GET /processing/requests`: records of the calling client's account (its KBs, resolved by the gateway). */
export class ProcessingRequestsQuery {
  @IsArray() @ArrayMaxSize(10_000) @IsString({ each: true }) kbids!: string[];
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @IsOptional() @IsBoolean() scheduled?: boolean;
  @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOptional() @IsIn(['timestamp', 'scheduled_at', 'completed_at']) sort_on?: 'timestamp' | 'scheduled_at' | 'completed_at';
  @IsOptional() @IsIn(['asc', 'desc']) sort_order?: 'asc' | 'desc';
}

/** `GET /processing/requests/{processing_id}`, within the client's account. */
export class ProcessingRequestRef {
  @IsArray() @ArrayMaxSize(10_000) @IsString({ each: true }) kbids!: string[];
  @IsString() @MaxLength(200) processing_id!: string;
}
