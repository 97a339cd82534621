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

const KV_VALUE = { oneOf: [{ type: 'string', maxLength: 1000 }, { type: 'number' }, { type: 'boolean' }] };
const KV_BOUND = { oneOf: [{ type: 'number' }, { type: 'string', format: 'date-time' }] };

/**
 * One node of a filter_expression's `key_value` member, recursive: `{and}`, `{or}`, `{not}`, or a
 * condition on a key of the key_value field `schema_id` — `eq`, `gte`/`lte` or `contains`
 * (`checkKvExpression` is the authority on which go together).
 */
export class KvFilterExpressionNode {
  @ApiPropertyOptional({ type: () => [KvFilterExpressionNode], minItems: 1 }) and?: KvFilterExpressionNode[];
  @ApiPropertyOptional({ type: () => [KvFilterExpressionNode], minItems: 1 }) or?: KvFilterExpressionNode[];
  @ApiPropertyOptional({ type: () => KvFilterExpressionNode }) not?: KvFilterExpressionNode;
  @ApiPropertyOptional({ description: 'The key_value field (and key-value schema) id', maxLength: 64 }) schema_id?: string;
  @ApiPropertyOptional({ description: 'The key', maxLength: 64 }) key?: string;
  @ApiPropertyOptional({ ...KV_VALUE, description: 'Equal (text exactly; a range holds it)' }) eq?: string | number | boolean;
  @ApiPropertyOptional({ ...KV_BOUND, description: 'At least (numbers or dates; a range reaching it)' }) gte?: number | string;
  @ApiPropertyOptional({ ...KV_BOUND, description: 'At most (numbers or dates; a range starting before it)' }) lte?: number | string;
  @ApiPropertyOptional({ type: 'string', maxLength: 1000, description: 'The text holds it (case-insensitive)' }) contains?: string;
}
