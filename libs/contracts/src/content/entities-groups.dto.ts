import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';

/** Ids of custom groups (those a user creates); groups found by processing keep processing's name. */
export const ENTITIES_GROUP_ID_PATTERN = /^[a-zA-Z0-9:_-]+$/;

/** Bounds on what a KB's users may store (docs/decisions/0018). */
export const ENTITIES_LIMITS = {
  groupsPerKb: 100,
  entitiesPerGroup: 2000,
  /** Entities a group lists at most (stored and found by processing together). */
  listedPerGroup: 2000,
  groupIdChars: 100,
  valueChars: 250,
  representsPerEntity: 50,
  deletesPerRequest: 2000,
} as const;

/** One entity of a group (API-MAP 3 "Entities groups"; nucliadb_models Entity). */
export class EntityDto {
  @ApiProperty() @IsDefined() @IsString() @MinLength(1) @MaxLength(ENTITIES_LIMITS.valueChars) value!: string;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() merged?: boolean;
  @ApiPropertyOptional({ type: [String], default: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ENTITIES_LIMITS.representsPerEntity)
  @IsString({ each: true })
  @MaxLength(ENTITIES_LIMITS.valueChars, { each: true })
  represents?: string[];
}

/** A map of entities by their id, as the document declares it. */
const ENTITY_MAP = { type: 'object', additionalProperties: { $ref: getSchemaPath(EntityDto) } } as const;

/** A group as `GET /entitiesgroup/{group}` returns it: its stored entities and those processing found. */
@ApiExtraModels(EntityDto)
export class EntitiesGroupDto {
  @ApiPropertyOptional({ type: 'string', nullable: true }) title!: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true }) color!: string | null;
  @ApiProperty({ description: 'True when a user created the group, false when it comes from processing' }) custom!: boolean;
  @ApiProperty(ENTITY_MAP) entities!: Record<string, EntityDto>;
}

/** `GET /entitiesgroups`: every group of the KB, without its entities (read them per group). */
export class KnowledgeBoxEntitiesDto {
  @ApiProperty() uuid!: string;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/EntitiesGroupDto' } }) groups!: Record<
    string,
    EntitiesGroupDto
  >;
}

/** `POST /entitiesgroups`. Entity maps are checked by content (keys, values and counts), every problem at once. */
@ApiExtraModels(EntityDto)
export class CreateEntitiesGroupDto {
  @ApiProperty({ pattern: ENTITIES_GROUP_ID_PATTERN.source, maxLength: ENTITIES_LIMITS.groupIdChars })
  @IsDefined()
  @IsString()
  @MaxLength(ENTITIES_LIMITS.groupIdChars)
  @Matches(ENTITIES_GROUP_ID_PATTERN, { message: 'group may only hold letters, digits, ":", "_" and "-"' })
  group!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(ENTITIES_LIMITS.valueChars) title?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(64) color?: string;
  @ApiPropertyOptional(ENTITY_MAP) @IsOptional() @IsObject() entities?: Record<string, unknown>;
}

/** `PATCH /entitiesgroup/{group}`: title and colour, entities added, replaced and deleted. */
@ApiExtraModels(EntityDto)
export class UpdateEntitiesGroupDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(ENTITIES_LIMITS.valueChars) title?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(64) color?: string;
  @ApiPropertyOptional(ENTITY_MAP) @IsOptional() @IsObject() add?: Record<string, unknown>;
  @ApiPropertyOptional(ENTITY_MAP) @IsOptional() @IsObject() update?: Record<string, unknown>;
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(ENTITIES_LIMITS.deletesPerRequest)
  @IsString({ each: true })
  @MaxLength(ENTITIES_LIMITS.valueChars, { each: true })
  delete?: string[];
}

export class EntitiesGroupRef {
  @IsDefined() @IsString() kbid!: string;
  /** Any group name processing may have produced; checked for length and slashes only. */
  @IsDefined() @IsString() @MinLength(1) @MaxLength(250) @Matches(/^[^/\0]+$/) group!: string;
}

export class CreateEntitiesGroupRequest {
  @IsDefined() @IsString() kbid!: string;
  @IsDefined() @IsObject() @Type(() => CreateEntitiesGroupDto) body!: CreateEntitiesGroupDto;
}

export class UpdateEntitiesGroupRequest extends EntitiesGroupRef {
  @IsDefined() @IsObject() @Type(() => UpdateEntitiesGroupDto) body!: UpdateEntitiesGroupDto;
}
