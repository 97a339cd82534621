import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export const LabelSetKinds = ['RESOURCES', 'PARAGRAPHS', 'SENTENCES', 'SELECTIONS'] as const;
export const LABELSET_ID_PATTERN = /^[a-zA-Z0-9:_-]+$/;

export class LabelDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(250) title!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) related?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4096) text?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2048) uri?: string;
}

export class LabelSetDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiPropertyOptional({ default: 'blue' }) @IsOptional() @IsString() @MaxLength(64) color?: string = 'blue';
  @ApiPropertyOptional({ default: true }) @IsOptional() @IsBoolean() multiple?: boolean = true;
  @ApiPropertyOptional({ enum: LabelSetKinds, isArray: true })
  @IsOptional()
  @IsArray()
  @IsIn(LabelSetKinds, { each: true })
  kind?: (typeof LabelSetKinds)[number][] = [];
  @ApiPropertyOptional({ type: [LabelDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(2000)
  @ValidateNested({ each: true })
  @Type(() => LabelDto)
  labels?: LabelDto[] = [];
}

export class LabelSetsDto {
  @ApiProperty() uuid!: string;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/LabelSetDto' } }) labelsets!: Record<
    string,
    LabelSetDto
  >;
}

export class LabelSetRef {
  @IsDefined() @IsString() kbid!: string;
  @IsDefined() @IsString() @MaxLength(250) @Matches(LABELSET_ID_PATTERN) labelset!: string;
}

export class SetLabelSetRequest extends LabelSetRef {
  @IsDefined() @IsObject() @ValidateNested() @Type(() => LabelSetDto) body!: LabelSetDto;
}
