import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

/** One choice of a learning-configuration member. */
export class LearningSchemaOptionDto {
  @ApiProperty() name!: string;
  @ApiProperty() value!: string;
  /** `builtin`, `local` (the operator's model folder) or a provider that needs `user_keys`. */
  @ApiProperty() provider!: string;
  @ApiProperty() user_prompt!: boolean;
  /** The model needs the KB's own key for its provider (`user_keys`). */
  @ApiProperty() user_key!: boolean;
}

/** A member chosen from a list (one, or several when `multiple`). */
export class LearningSchemaChoiceDto {
  @ApiProperty({ type: [LearningSchemaOptionDto] }) options!: LearningSchemaOptionDto[];
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }) default!: string | string[];
  /** May be set when the KB is created. */
  @ApiProperty() create!: boolean;
  /** May be changed afterwards. */
  @ApiProperty() update!: boolean;
  @ApiProperty() multiple!: boolean;
}

/** A free-form member (`user_keys`, prompts): `schemas` describes what it holds. */
export class LearningSchemaFreeDto {
  @ApiProperty({ type: 'object', additionalProperties: true }) schemas!: Record<string, unknown>;
  @ApiProperty() create!: boolean;
  @ApiProperty() update!: boolean;
}

/** The learning configuration schema: every member a KB's model configuration may set, with its choices. */
export class LearningConfigurationSchemaDto {
  @ApiProperty({ type: LearningSchemaChoiceDto, deprecated: true }) semantic_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) semantic_models!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) default_semantic_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) generative_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) summary_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) anonymization_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) visual_labeling!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) ner_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) relation_model!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaChoiceDto }) summary!: LearningSchemaChoiceDto;
  @ApiProperty({ type: LearningSchemaFreeDto }) user_keys!: LearningSchemaFreeDto;
  @ApiProperty({ type: LearningSchemaFreeDto }) user_prompts!: LearningSchemaFreeDto;
  @ApiProperty({ type: LearningSchemaFreeDto }) summary_prompt!: LearningSchemaFreeDto;
  @ApiProperty({ type: LearningSchemaFreeDto }) prefer_markdown_generative_response!: LearningSchemaFreeDto;
}

/** What the service knows of a semantic model. */
export class SemanticModelConfigDto {
  @ApiProperty() provider!: string;
  /** Vector dimensions (0: read from the model folder when it loads). */
  @ApiProperty() size!: number;
  @ApiProperty({ enum: ['DOT', 'COSINE'] }) similarity!: 'DOT' | 'COSINE';
  @ApiProperty() threshold!: number;
  @ApiProperty({ type: [Number] }) matryoshka_dims!: number[];
}

/** A KB's model configuration as read back: what was set, the defaults, and the semantic models' facts (provider keys masked). */
export class ModelConfigurationDto {
  @ApiProperty() anonymization_model!: string;
  @ApiProperty() visual_labeling!: string;
  @ApiProperty() generative_model!: string;
  @ApiProperty() ner_model!: string;
  @ApiProperty() relation_model!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'By provider, with every secret masked' })
  user_keys!: Record<string, unknown> | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) user_prompts?: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', nullable: true }) summary!: string | null;
  @ApiProperty() summary_model!: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true }) summary_prompt?: Record<string, unknown> | null;
  @ApiProperty() prefer_markdown_generative_response!: boolean;
  @ApiProperty({ type: [String], description: 'Always empty: no labeler models' }) resource_labelers_models!: string[];
  @ApiProperty({ type: [String], description: 'Always empty: no labeler models' }) paragraph_labelers_models!: string[];
  @ApiProperty({ type: [String], description: 'Always empty: no intent models' }) intent_models!: string[];
  @ApiProperty({ deprecated: true, description: 'The default semantic model' }) semantic_model!: string;
  @ApiProperty({ type: [String] }) semantic_models!: string[];
  @ApiProperty() default_semantic_model!: string;
  @ApiProperty({ enum: ['DOT', 'COSINE'] }) semantic_vector_similarity!: 'DOT' | 'COSINE';
  @ApiProperty() semantic_vector_size!: number;
  @ApiProperty({ type: [Number] }) semantic_matryoshka_dims!: number[];
  @ApiProperty() semantic_threshold!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', nullable: true, allOf: [{ $ref: getSchemaPath(SemanticModelConfigDto) }] },
    description: 'By semantic model id; null for a model the service does not know',
  })
  semantic_model_configs!: Record<string, SemanticModelConfigDto | null>;
}
