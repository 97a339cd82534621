import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsObject, IsString } from 'class-validator';

/** Model configuration input (spec 4.6); members are checked by `learningConfigurationIssues`. */
export class ModelConfigurationInputDto {
  @ApiPropertyOptional() anonymization_model?: string;
  @ApiPropertyOptional() visual_labeling?: string;
  @ApiPropertyOptional() generative_model?: string;
  @ApiPropertyOptional() ner_model?: string;
  @ApiPropertyOptional() relation_model?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) user_keys?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) user_prompts?: Record<string, unknown> | null;
  @ApiPropertyOptional({ nullable: true }) summary?: string | null;
  @ApiPropertyOptional() summary_model?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) summary_prompt?: Record<string, unknown> | null;
  @ApiPropertyOptional() prefer_markdown_generative_response?: boolean;
  @ApiPropertyOptional({ nullable: true }) default_semantic_model?: string | null;
  @ApiPropertyOptional({ deprecated: true }) semantic_model?: string;
  @ApiPropertyOptional({ type: [String] }) semantic_models?: string[];
}

export class KbConfigRef {
  @IsDefined() @IsString() kb_id!: string;
}

export class SetKbConfigRequest extends KbConfigRef {
  @IsDefined() @IsObject() config!: Record<string, unknown>;
  /** 'add' replaces the configuration (semantic models allowed); 'update' merges (no semantic model changes). */
  @IsDefined() @IsString() mode!: 'add' | 'update';
}

export class LearningSchemaRequest {}
