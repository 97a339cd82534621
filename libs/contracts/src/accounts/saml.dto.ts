import { IsDefined, IsEmail, IsOptional, IsString, MaxLength } from 'class-validator';

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

export interface SamlLoginDto {
  /** The identity provider's SSO URL carrying the AuthnRequest (HTTP-Redirect binding). */
  redirect_url: string;
}

export class SamlAcsRequest extends SamlAccountRef {
  /** The base64 `SAMLResponse` form member posted by the identity provider. */
  @IsDefined() @IsString() @MaxLength(1_000_000) saml_response!: string;
  @IsOptional() @IsString() @MaxLength(512) relay_state?: string;
}
