import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsObject, IsOptional, IsString, IsUrl, Matches, MaxLength, ValidateNested } from 'class-validator';
import { AccountRef } from './kb.dto';

export const NUA_CLIENT_ID_PATTERN = /^[a-z0-9_-]+$/;

export class ProcessingWebhookDto {
  @ApiProperty() @IsDefined() @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) uri!: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } }) @IsOptional() @IsObject() headers?: Record<
    string,
    string
  >;
}

export class CreateNuaClientDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(320) contact!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional({ default: '' }) @IsOptional() @IsString() @MaxLength(4096) description?: string;
  @ApiPropertyOptional({ type: String, nullable: true, pattern: NUA_CLIENT_ID_PATTERN.source })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(NUA_CLIENT_ID_PATTERN)
  client_id?: string | null;
  @ApiPropertyOptional({ type: ProcessingWebhookDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProcessingWebhookDto)
  processing_webhook?: ProcessingWebhookDto;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() allow_kb_management?: boolean;
}

export class ModifyNuaClientDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(320) contact?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4096) description?: string;
  @ApiPropertyOptional({ type: ProcessingWebhookDto, nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => ProcessingWebhookDto)
  processing_webhook?: ProcessingWebhookDto | null;
}

export class NuaClientKeyDto {
  @ApiProperty({ description: 'Shown once; only a salted hash is stored.' }) token!: string;
  @ApiProperty() client_id!: string;
  @ApiProperty() internal_id!: string;
}

export class NuaClientDto {
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty() contact!: string;
  @ApiProperty() created!: string;
  @ApiProperty() partitions!: number;
  @ApiProperty() client_id!: string;
  @ApiProperty() internal_id!: string;
  @ApiProperty() account_id!: string;
  @ApiPropertyOptional({ type: ProcessingWebhookDto, nullable: true }) processing_webhook!: ProcessingWebhookDto | null;
  @ApiProperty() allow_kb_management!: boolean;
}

/** Internal only: the client's webhook with its headers in clear, for the push that will call it. */
export interface NuaClientWebhookDto {
  processing_webhook: ProcessingWebhookDto | null;
}

export class NuaClientListDto {
  @ApiProperty({ type: [NuaClientDto] }) clients!: NuaClientDto[];
}

export class CreateNuaClientRequest extends AccountRef {
  @IsDefined() @ValidateNested() @Type(() => CreateNuaClientDto) body!: CreateNuaClientDto;
}

export class ListNuaClientsRequest extends AccountRef {
  @IsOptional() @IsString() client_id?: string;
}

/** `client` is the client id or the internal id (the reference JS client sends the latter). */
export class NuaClientRef extends AccountRef {
  @IsDefined() @IsString() client!: string;
}

export class ModifyNuaClientRequest extends NuaClientRef {
  @IsDefined() @ValidateNested() @Type(() => ModifyNuaClientDto) body!: ModifyNuaClientDto;
}
