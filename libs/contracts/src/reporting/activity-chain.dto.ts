import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, MaxLength } from 'class-validator';

/** Verify an activity chain (a KB's records of one event type), or a slice of it starting at `from_seq`. */
export class VerifyActivityChainRequest {
  @IsString() @MaxLength(100) kbid!: string;
  @IsString() @MaxLength(100) event_type!: string;
  /** First position verified (default 1); the slice resumes from the stored hash of the record before it. */
  @IsOptional() @IsInt() from_seq?: number;
  /** Most records verified (default 100 000, at most 1 000 000). */
  @IsOptional() @IsInt() limit?: number;
}

export class ActivityChainLink {
  @ApiProperty() seq!: number;
  @ApiProperty() hash!: string;
}

/** The first broken link of a chain. */
export class ActivityChainBreak {
  @ApiProperty() seq!: number;
  @ApiPropertyOptional() event_id?: string;
  @ApiProperty({ enum: ['hash_mismatch', 'missing_record', 'head_mismatch'] }) reason!:
    'hash_mismatch' | 'missing_record' | 'head_mismatch';
}

/** What a verification found (docs/activity.md, "Tamper evidence"). */
export class ActivityChainReport {
  @ApiProperty() kbid!: string;
  @ApiProperty() event_type!: string;
  @ApiProperty() from_seq!: number;
  /** Records whose hash was recomputed and matched, from `from_seq` on, before any break. */
  @ApiProperty({ description: 'Records whose hash was recomputed and matched, from `from_seq` on, before any break' }) verified!: number;
  /** The last record verified. */
  @ApiProperty({ type: ActivityChainLink, nullable: true, description: 'The last record verified' }) last!: ActivityChainLink | null;
  /** The chain's end as recorded when it was last sealed. */
  @ApiProperty({ type: ActivityChainLink, nullable: true, description: "The chain's end as recorded when it was last sealed" })
  head!: ActivityChainLink | null;
  /** Records stored but not sealed yet (they join the chain within a few seconds). */
  @ApiProperty({ description: 'Records stored but not sealed yet (they join the chain within a few seconds)' }) unsealed!: number;
  /** The first broken link: a record whose stored members no longer give its hash, a position with no record, or an end that is not the head. */
  @ApiProperty({
    type: ActivityChainBreak,
    nullable: true,
    description:
      'The first broken link: a record whose stored members no longer give its hash, a position with no record, or an end that is not the head',
  })
  broken!: ActivityChainBreak | null;
  /** Where the next slice starts when this one stopped at `limit` before the head. */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Where the next slice starts when this one stopped at `limit` before the head',
  })
  next_seq!: number | null;
}
