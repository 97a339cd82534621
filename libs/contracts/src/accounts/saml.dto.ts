import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsFQDN, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';

/** Bus requests and replies of SAML single sign-on (the service provider side lives in accounts). */

export class SsoDiscoverRequest {
  @IsDefined() @IsEmail({ require_tld: false }) @MaxLength(320) email!: string;
}

/** Which account signs this e-mail address in through its identity provider, if any. */
export type SsoDiscoveryDto = { account_id: string; login_path: string } | { account_id: null };

export class SamlAccountRef {
  /** The account's id (the SP endpoints are per account). */
  @IsDefined() @IsString() @MaxLength(64) account_id!: string;
}

export class SamlLoginRequest extends SamlAccountRef {
  @IsOptional() @IsString() @MaxLength(512) relay_state?: string;
}

export interface SamlMetadataDto {
  /** SAML 2.0 SP metadata (EntityDescriptor) as XML text. */
  xml: string;
}

export class SamlLoginDto {
  @ApiProperty({ description: "The identity provider's SSO URL carrying the AuthnRequest (HTTP-Redirect binding): open it in the browser" })
  redirect_url!: string;
}

export class SamlAcsRequest extends SamlAccountRef {
  /** The base64 `SAMLResponse` form member posted by the identity provider. */
  @IsDefined() @IsString() @MaxLength(1_000_000) saml_response!: string;
  @IsOptional() @IsString() @MaxLength(512) relay_state?: string;
}

/** A signed-in user starts single sign-on to attach the IdP identity to themselves (the link intent). */
export class SamlLinkRequest extends SamlLoginRequest {
  /** The signed-in user the identity will be attached to: the request id is bound to them. */
  @IsDefined() @IsString() @MaxLength(64) user_id!: string;
}

/** The DNS record proving control of a domain. */
export class DomainVerificationRecordDto {
  @ApiProperty({ enum: ['TXT'] }) type!: 'TXT';
  @ApiProperty({ example: '_kb-challenge.acme.com', description: 'Publish here (or at the domain itself)' }) name!: string;
  @ApiProperty({ example: 'kb-domain-verification=3q2-7w…' }) value!: string;
}

/** An account's claim on an e-mail domain for single sign-on. */
export class SamlDomainDto {
  @ApiProperty({ example: 'acme.com' }) domain!: string;
  @ApiProperty({ enum: ['pending', 'verified'], description: 'Only a verified domain sends its users to the identity provider' }) status!:
    'pending' | 'verified';
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time' }) verified_at!: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', description: 'Last verification attempt' }) checked_at!:
    string | null;
  @ApiProperty({ type: DomainVerificationRecordDto }) record!: DomainVerificationRecordDto;
}

export class ClaimSamlDomainDto {
  @ApiProperty({ example: 'acme.com' })
  @IsDefined()
  @IsFQDN({ require_tld: false, allow_underscores: false })
  @MaxLength(253)
  domain!: string;
}

export class SamlDomainsRef {
  /** Account id or slug. */
  @IsDefined() @IsString() @MaxLength(64) account!: string;
}

export class ClaimSamlDomainRequest extends SamlDomainsRef {
  @IsDefined() @ValidateNested() @Type(() => ClaimSamlDomainDto) body!: ClaimSamlDomainDto;
}

export class VerifySamlDomainRequest extends SamlDomainsRef {
  @IsDefined() @IsString() @MaxLength(253) domain!: string;
}
