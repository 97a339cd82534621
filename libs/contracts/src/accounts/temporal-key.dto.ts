import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';

/** A temporal key lives at most this long (spec 8). */
export const MAX_TEMPORAL_KEY_TTL_SECONDS = 10;

export class CreateTemporalKeyDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_TEMPORAL_KEY_TTL_SECONDS, default: MAX_TEMPORAL_KEY_TTL_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TEMPORAL_KEY_TTL_SECONDS)
  ttl?: number;
  @ApiPropertyOptional({
    type: [String],
    nullable: true,
    description: 'With groups the key opens only the /ask endpoints, and its groups replace those of the request',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(256, { each: true })
  security_groups?: string[] | null;
}

export class TemporalKeyDto {
  @ApiProperty() token!: string;
}

export class CreateTemporalKeyRequest {
  /** The API key (credential id) the temporal key derives from. */
  @IsDefined() @IsString() parent_key_id!: string;
  @IsDefined() @ValidateNested() @Type(() => CreateTemporalKeyDto) body!: CreateTemporalKeyDto;
}
