import { ApiPropertyOptional } from '@nestjs/swagger';
import { FilterFieldTypes } from './filter-expression';

/**
 * One node of the `filter_expression` language as the OpenAPI document declares it, recursive:
 * `{and: [...]}`, `{or: [...]}`, `{not: ...}`, or a condition tagged by `prop` with that condition's
 * members. One schema for every condition (not a `oneOf` per `prop`): `filterExpressionCheck` is
 * the authority on which members go together and where each `prop` applies; the document gives
 * clients the member names, their types and the `prop` values.
 */
export class FilterExpressionNode {
  @ApiPropertyOptional({ type: () => [FilterExpressionNode], minItems: 1 }) and?: FilterExpressionNode[];
  @ApiPropertyOptional({ type: () => [FilterExpressionNode], minItems: 1 }) or?: FilterExpressionNode[];
  @ApiPropertyOptional({ type: () => FilterExpressionNode }) not?: FilterExpressionNode;
  @ApiPropertyOptional({
    enum: [
      'resource',
      'field',
      'keyword',
      'created',
      'modified',
      'label',
      'resource_mimetype',
      'field_mimetype',
      'entity',
      'language',
      'origin_tag',
      'origin_metadata',
      'origin_path',
      'origin_source',
      'origin_collaborator',
      'generated',
      'kind',
      'status',
    ],
    description: "`field`, `keyword` and `field_mimetype` filter fields (not the catalog's resources); `kind` paragraphs only.",
  })
  prop?: string;
  @ApiPropertyOptional({ description: 'resource: its id; origin_source: the source id' }) id?: string;
  @ApiPropertyOptional({ description: 'resource: its slug (instead of id)' }) slug?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'created, modified' }) since?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'created, modified' }) until?: string;
  @ApiPropertyOptional({ description: 'label' }) labelset?: string;
  @ApiPropertyOptional({ description: 'label' }) label?: string;
  @ApiPropertyOptional({
    description: `resource_mimetype, field_mimetype: the media type (e.g. application); field: ${FilterFieldTypes.join(', ')}`,
  })
  type?: string;
  @ApiPropertyOptional({ description: 'resource_mimetype, field_mimetype: the subtype (e.g. pdf); entity: the entity group' })
  subtype?: string;
  @ApiPropertyOptional({ description: 'field: the field id' }) name?: string;
  @ApiPropertyOptional({ description: 'keyword' }) word?: string;
  @ApiPropertyOptional({ description: 'entity, origin_metadata' }) value?: string;
  @ApiPropertyOptional({ description: 'language' }) language?: string;
  @ApiPropertyOptional({ description: 'language: the main language only' }) only_primary?: boolean;
  @ApiPropertyOptional({ description: 'origin_tag' }) tag?: string;
  @ApiPropertyOptional({ description: 'origin_metadata: the metadata key' }) field?: string;
  @ApiPropertyOptional({ description: 'origin_path' }) prefix?: string;
  @ApiPropertyOptional({ description: 'origin_collaborator' }) collaborator?: string;
  @ApiPropertyOptional({ enum: ['data-augmentation'], description: 'generated' }) by?: string;
  @ApiPropertyOptional({ description: 'generated' }) da_task?: string;
  @ApiPropertyOptional({ description: 'status: PENDING, PROCESSED, ERROR, …' }) status?: string;
  @ApiPropertyOptional({ description: 'kind: the paragraph kind' }) kind?: string;
}

/** The schema of a member holding one expression (register FilterExpressionNode with ApiExtraModels where it is used). */
export const filterExpressionMember = (description: string) => ({
  allOf: [{ $ref: '#/components/schemas/FilterExpressionNode' }],
  description,
});
