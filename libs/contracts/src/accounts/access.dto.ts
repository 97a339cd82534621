import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

/** `ephemeral`: the `eph-token` query parameter of download routes (never a header). */
export const CredentialHeaders = ['authorization', 'serviceaccount', 'uakey', 'ephemeral'] as const;
export type CredentialHeader = (typeof CredentialHeaders)[number];

/** Asks the accounts service who holds `token` and what it may do on the named KB or account. */
export class CheckAccessRequest {
  @IsIn(CredentialHeaders) header!: CredentialHeader;
  @IsString() @MaxLength(4096) token!: string;
  @IsOptional() @IsString() @MaxLength(128) kbid?: string;
  /** Account id or slug from the path. */
  @IsOptional() @IsString() @MaxLength(128) account?: string;
}

export class CredentialRevokedEvent {
  @IsString({ each: true }) credential_ids!: string[];
}

export class AccessChangedEvent {
  @IsOptional() @IsString({ each: true }) user_ids?: string[];
  @IsOptional() @IsString({ each: true }) kb_ids?: string[];
  /** Accounts whose grants are void (a deleted account: its routes and every credential of it). */
  @IsOptional() @IsString({ each: true }) account_ids?: string[];
}
