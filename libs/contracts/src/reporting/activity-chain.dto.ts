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

export interface ActivityChainLink {
  seq: number;
  hash: string;
}

/** What a verification found (docs/activity.md, "Tamper evidence"). */
export interface ActivityChainReport {
  kbid: string;
  event_type: string;
  from_seq: number;
  /** Records whose hash was recomputed and matched, from `from_seq` on, before any break. */
  verified: number;
  /** The last record verified. */
  last: ActivityChainLink | null;
  /** The chain's end as recorded when it was last sealed. */
  head: ActivityChainLink | null;
  /** Records stored but not sealed yet (they join the chain within a few seconds). */
  unsealed: number;
  /** The first broken link: a record whose stored members no longer give its hash, a position with no record, or an end that is not the head. */
  broken: { seq: number; event_id?: string; reason: 'hash_mismatch' | 'missing_record' | 'head_mismatch' } | null;
  /** Where the next slice starts when this one stopped at `limit` before the head. */
  next_seq: number | null;
}
