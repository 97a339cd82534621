import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateNested } from 'class-validator';

/** An ephemeral (browser) token lives at most this long; the default is shorter. */
export const MAX_EPHEMERAL_TOKEN_TTL_SECONDS = 900;
export const DEFAULT_EPHEMERAL_TOKEN_TTL_SECONDS = 300;

/** The query parameter an ephemeral token travels in (download routes only). */
export const EPHEMERAL_TOKEN_PARAM = 'eph-token';

export class CreateEphemeralTokenDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 256,
    description: 'Free label of the browser session the token is for (kept in the token, not interpreted)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  agent_session?: string | null;
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_EPHEMERAL_TOKEN_TTL_SECONDS,
    default: DEFAULT_EPHEMERAL_TOKEN_TTL_SECONDS,
    description: 'Seconds the token lives',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EPHEMERAL_TOKEN_TTL_SECONDS)
  ttl?: number | null;
}

export class EphemeralTokenDto {
  @ApiProperty({ description: `Read-only token for the ${EPHEMERAL_TOKEN_PARAM} query parameter of the KB's download routes` })
  token!: string;
}

/**
 * Mint a token acting, read-only and on downloads only, for `user_id` (a user the gateway found to
 * hold a role on the KB) or `parent_key_id` (an API key of the KB): revoking that key, or the
 * user losing the KB, ends the token too.
 */
export class CreateEphemeralTokenRequest {
  @IsUUID() kbid!: string;
  @IsOptional() @IsString() @MaxLength(128) user_id?: string;
  @IsOptional() @IsString() @MaxLength(128) parent_key_id?: string;
  @IsDefined() @ValidateNested() @Type(() => CreateEphemeralTokenDto) body!: CreateEphemeralTokenDto;
}
