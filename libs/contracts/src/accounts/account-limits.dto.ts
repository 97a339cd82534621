import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';

/** Integer members of `limits.usage` and `limits.processing` (spec 2.5); -1 is unlimited. */
export const MONTHLY_LIMIT_NAMES = [
  'monthly_limit_paragraphs_processed',
  'monthly_limit_docs_no_media_processed',
  'monthly_limit_media_seconds_processed',
  'monthly_limit_paragraphs_stored',
  'monthly_limit_hosted_searches_performed',
  'monthly_limit_hosted_answers_generated',
  'monthly_limit_self_hosted_searches_performed',
  'monthly_limit_self_hosted_answers_generated',
  'storage_limit_max_bytes_per_kb',
  'storage_limit_max_resources_per_kb',
  'monthly_limit_non_media_files_processed',
  'monthly_limit_chars_processed',
] as const;
export type MonthlyLimitName = (typeof MONTHLY_LIMIT_NAMES)[number];
export const UPLOAD_LIMIT_NAMES = ['upload_limit_max_media_file_size', 'upload_limit_max_non_media_file_size'] as const;

export type MonthlyLimits = Record<MonthlyLimitName, number>;
export interface EffectiveLimits {
  upload: Record<(typeof UPLOAD_LIMIT_NAMES)[number], number>;
  usage: MonthlyLimits;
  processing: MonthlyLimits;
}

const LIMIT_MAX = Number.MAX_SAFE_INTEGER;

/** Each member optional, an integer from -1 (unlimited) up. */
function limitMembers(cls: { prototype: object }, names: readonly string[]): void {
  for (const name of names) {
    IsOptional()(cls.prototype, name);
    IsInt()(cls.prototype, name);
    Min(-1)(cls.prototype, name);
    Max(LIMIT_MAX)(cls.prototype, name);
    ApiPropertyOptional({ type: Number, minimum: -1 })(cls.prototype, name);
  }
}

export class MonthlyLimitsPatchDto {}
limitMembers(MonthlyLimitsPatchDto, MONTHLY_LIMIT_NAMES);
export class UploadLimitsPatchDto {}
limitMembers(UploadLimitsPatchDto, UPLOAD_LIMIT_NAMES);

/** Set Account Limits (operators): the members given replace the account's own; the others keep theirs. */
export class SetAccountLimitsDto {
  @ApiPropertyOptional({ type: UploadLimitsPatchDto }) @IsOptional() @ValidateNested() @Type(() => UploadLimitsPatchDto) upload?: Partial<
    EffectiveLimits['upload']
  >;
  @ApiPropertyOptional({ type: MonthlyLimitsPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => MonthlyLimitsPatchDto)
  usage?: Partial<MonthlyLimits>;
  @ApiPropertyOptional({ type: MonthlyLimitsPatchDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => MonthlyLimitsPatchDto)
  processing?: Partial<MonthlyLimits>;
}

export class SetAccountLimitsRequest {
  @IsDefined() @IsString() account!: string;
  @IsDefined() @IsString() user_id!: string;
  @IsDefined() @ValidateNested() @Type(() => SetAccountLimitsDto) body!: SetAccountLimitsDto;
}

export class AccountQuotaRequest {
  @IsDefined() @IsString() account_id!: string;
}

export interface AccountQuotaDto {
  found: boolean;
  limits: EffectiveLimits;
}

export class KbAccountRequest {
  @IsDefined() @IsString() kb_id!: string;
}

export class AccountLimitsChangedEvent {
  @IsString() account_id!: string;
}
