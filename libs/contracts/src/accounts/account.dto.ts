import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { AccountRoles, type AccountRole } from '../common/principal';

export const ACCOUNT_SLUG_PATTERN = /^[a-z0-9_-]+$/;

export class SamlLegacyDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) domain?: string;
  @ApiPropertyOptional() @IsOptional() @IsUrl({ require_tld: false, protocols: ['https', 'http'] }) sso_url?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1024) entity_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(20000) x509_cert?: string;
}

export class SamlConfigDto {
  @ApiProperty({ type: [String] })
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Matches(/^[a-z0-9.-]+\.[a-z]{2,}$/i, { each: true })
  domains!: string[];
  @ApiProperty() @IsDefined() @IsUrl({ require_tld: false, protocols: ['https', 'http'] }) sso_url!: string;
  @ApiProperty() @IsDefined() @IsString() @MaxLength(1024) entity_id!: string;
  @ApiProperty() @IsDefined() @IsString() @MaxLength(20000) x509_cert!: string;
  @ApiPropertyOptional({ default: 'exact' }) @IsOptional() @IsString() @MaxLength(64) authn_context?: string;
}

export class CreateAccountDto {
  @ApiProperty({ pattern: ACCOUNT_SLUG_PATTERN.source })
  @IsDefined()
  @IsString()
  @MaxLength(64)
  @Matches(ACCOUNT_SLUG_PATTERN)
  slug!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(4096) description?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsEmail() email?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(64) zone?: string | null;
}

export class ModifyAccountDto {
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(250) title?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(4096) description?: string | null;
  @ApiPropertyOptional({ type: SamlLegacyDto, nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => SamlLegacyDto)
  saml?: SamlLegacyDto | null;
  @ApiPropertyOptional({ type: SamlConfigDto, nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => SamlConfigDto)
  saml_config?: SamlConfigDto | null;
  @ApiPropertyOptional({ type: String, nullable: true, pattern: ACCOUNT_SLUG_PATTERN.source })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(ACCOUNT_SLUG_PATTERN)
  slug?: string | null;
}

export class AccountUserChangeDto {
  @ApiProperty() @IsDefined() @IsString() id!: string;
  @ApiProperty({ enum: AccountRoles }) @IsDefined() @IsIn(AccountRoles) role!: AccountRole;
}

export class UpdateAccountUsersDto {
  @ApiPropertyOptional({ type: [AccountUserChangeDto], nullable: true })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => AccountUserChangeDto)
  add?: AccountUserChangeDto[] | null;
  @ApiPropertyOptional({ type: [String], nullable: true }) @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) delete?:
    string[] | null;
}

export class InviteToAccountDto {
  @ApiProperty() @IsDefined() @IsEmail() @MaxLength(320) email!: string;
  @ApiProperty({ enum: AccountRoles }) @IsDefined() @IsIn(AccountRoles) role!: AccountRole;
}

export class AccountLimitsDto {
  @ApiProperty() upload!: Record<string, number>;
  @ApiProperty() usage!: Record<string, number>;
  @ApiProperty() processing!: Record<string, number>;
}

export class AccountDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiPropertyOptional({ nullable: true, type: String }) domain!: string | null;
  @ApiProperty() type!: string;
  @ApiProperty() can_manage_account!: boolean;
  @ApiProperty() current_users!: number;
  @ApiProperty() max_users!: number;
  @ApiProperty() current_kbs!: number;
  @ApiProperty() max_kbs!: number;
  @ApiProperty() blocking_state!: string;
  @ApiProperty({ type: [String] }) blocked_features!: string[];
  @ApiProperty({ type: AccountLimitsDto }) limits!: AccountLimitsDto;
  @ApiProperty() creation_date!: string;
  @ApiPropertyOptional({ nullable: true, type: String }) trial_expiration_date!: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) saml_entity_id!: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) saml_sso_url!: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) saml_x509_cert!: string | null;
  @ApiPropertyOptional({ nullable: true, type: SamlConfigDto }) saml_config!: SamlConfigDto | null;
}

export class AccountSummaryDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() title!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ enum: AccountRoles }) role!: AccountRole;
  @ApiProperty() can_manage_account!: boolean;
}

export class AccountUserDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() email!: string;
  @ApiProperty({ enum: AccountRoles }) role!: AccountRole;
}

export class InviteCreatedDto {
  @ApiProperty() email!: string;
  @ApiProperty() role!: string;
  @ApiProperty() expires!: string;
  @ApiProperty({ description: 'true when the invitation was e-mailed; otherwise share `invite_url` yourself' }) sent!: boolean;
  @ApiPropertyOptional({ description: 'Present only when no mail was sent' }) invite_url?: string;
}

/** An account was deleted: what other services keep for it (content: its backups) goes too. */
export class AccountDeletedEvent {
  @IsDefined() @IsString() account_id!: string;
}

/** Bus requests: `account` is an id or a slug; `user_id` acts. */
export class AccountCallerRef {
  @IsDefined() @IsString() account!: string;
  @IsDefined() @IsString() user_id!: string;
}

export class CreateAccountRequest {
  @IsDefined() @IsString() user_id!: string;
  @IsDefined() @ValidateNested() @Type(() => CreateAccountDto) body!: CreateAccountDto;
}

export class ModifyAccountRequest extends AccountCallerRef {
  @IsDefined() @ValidateNested() @Type(() => ModifyAccountDto) body!: ModifyAccountDto;
}

export class UpdateAccountUsersRequest extends AccountCallerRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateAccountUsersDto) body!: UpdateAccountUsersDto;
}

export class SearchAccountUsersRequest extends AccountCallerRef {
  @IsDefined() @IsString() @MaxLength(256) query!: string;
}

export class InviteToAccountRequest extends AccountCallerRef {
  @IsDefined() @ValidateNested() @Type(() => InviteToAccountDto) body!: InviteToAccountDto;
}
