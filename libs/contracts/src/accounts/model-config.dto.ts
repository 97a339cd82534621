import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';

/** Model configuration input (spec 4.6); members are checked by `learningConfigurationIssues`. */
export class ModelConfigurationInputDto {
  @ApiPropertyOptional() anonymization_model?: string;
  @ApiPropertyOptional() visual_labeling?: string;
  @ApiPropertyOptional() generative_model?: string;
  @ApiPropertyOptional() ner_model?: string;
  @ApiPropertyOptional() relation_model?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) user_keys?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) user_prompts?: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: String, nullable: true }) summary?: string | null;
  @ApiPropertyOptional() summary_model?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) summary_prompt?: Record<string, unknown> | null;
  @ApiPropertyOptional() prefer_markdown_generative_response?: boolean;
  @ApiPropertyOptional({ type: String, nullable: true }) default_semantic_model?: string | null;
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

/** Adds or removes one semantic model (vectorset) of a KB (`accounts.kb.semantic-model.*`). */
export class SemanticModelChangeRequest {
  @IsDefined() @IsString() kb_id!: string;
  @IsDefined() @IsString() @MaxLength(256) model!: string;
}

export class VectorsetDto {
  /** The semantic model id. */
  @ApiProperty() id!: string;
  /** The name its vectors are stored and searched under (the provider's model name, or the id). */
  @ApiProperty() vectorset!: string;
  @ApiProperty() default!: boolean;
}

export class KbVectorsetsDto {
  @ApiProperty({ type: [VectorsetDto] }) vectorsets!: VectorsetDto[];
}

/** Published when a KB's semantic models change: content vectorises for an added one, drops a removed one's vectors. */
export class SemanticModelsChangedEvent {
  @IsDefined() @IsString() kb_id!: string;
  @IsOptional() @IsString() added?: string;
  /** The stored vectorset name of a removed model. */
  @IsOptional() @IsString() removed_vectorset?: string;
}

export class AddModelToKbDto {
  @ApiProperty({ description: 'a semantic model id from the learning configuration schema' })
  @IsDefined()
  @IsString()
  @MaxLength(256)
  id!: string;
}
