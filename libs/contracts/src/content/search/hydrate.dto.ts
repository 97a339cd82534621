import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Check, checks, Closed } from '../../common/member-checks';
import { nestedCheck } from '../../common/validation';
import { SecurityFilter } from './find.dto';
import { securityCheck } from './retrieval.dto';
import { searchPayloadOf, type SearchPayload } from './search-payload';

/** Paragraph ids one /hydrate may name (the reference's bound). */
export const HYDRATE_MAX_IDS = 50;
/** Neighbours asked on each side of a paragraph at most. */
export const HYDRATE_MAX_NEIGHBOURS = 10;
/** Longest paragraph id accepted (resource, field type, a 250-character field id, a split, offsets). */
export const PARAGRAPH_ID_MAX = 450;
/** `{rid}/{field type letter}/{field id}[/{split}]/{start}-{end}`. */
export const PARAGRAPH_ID =
  /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\/[a-z]\/[^/]{1,250}(\/[^/]{1,128})?\/[0-9]{1,10}-[0-9]{1,10}$/i;

@Closed()
export class HydrateResourceOptions {
  @ApiPropertyOptional({ default: true }) @Check(checks.bool()) title?: boolean;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) summary?: boolean;
  @ApiPropertyOptional({ type: 'boolean', enum: [false], description: 'Not supported.' })
  @Check(checks.unsupported('origin hydration is not available; read the resource', (v) => v === undefined || v === null || v === false))
  origin?: boolean;
  @ApiPropertyOptional({ type: 'boolean', enum: [false], description: 'Not supported.' })
  @Check(checks.unsupported('security hydration is not available; read the resource', (v) => v === undefined || v === null || v === false))
  security?: boolean;
}

@Closed()
export class HydrateNeighbours {
  @ApiPropertyOptional({ minimum: 0, maximum: HYDRATE_MAX_NEIGHBOURS, default: 2 })
  @Check(checks.int(0, HYDRATE_MAX_NEIGHBOURS))
  before?: number;
  @ApiPropertyOptional({ minimum: 0, maximum: HYDRATE_MAX_NEIGHBOURS, default: 2 })
  @Check(checks.int(0, HYDRATE_MAX_NEIGHBOURS))
  after?: number;
}

@Closed()
export class HydrateRelated {
  @ApiPropertyOptional({ type: HydrateNeighbours })
  @Check(nestedCheck(HydrateNeighbours, { optional: true }))
  neighbours?: HydrateNeighbours;
}

@Closed()
export class HydrateParagraphOptions {
  @ApiPropertyOptional({ default: true }) @Check(checks.bool()) text?: boolean;
  @ApiPropertyOptional({ type: HydrateRelated }) @Check(nestedCheck(HydrateRelated, { optional: true })) related?: HydrateRelated;
}

@Closed()
export class HydrateOptions {
  @ApiPropertyOptional({ type: HydrateResourceOptions })
  @Check(nestedCheck(HydrateResourceOptions, { optional: true }))
  resource?: HydrateResourceOptions;
  @ApiPropertyOptional({ type: HydrateParagraphOptions })
  @Check(nestedCheck(HydrateParagraphOptions, { optional: true }))
  paragraph?: HydrateParagraphOptions;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'Not supported: read the fields of the resource.' })
  @Check(checks.unsupported('field hydration is not available; read the fields of the resource'))
  field?: null;
}

/**
 * POST /kb/{kbid}/hydrate (a hidden route of the reference): the text and metadata of given
 * paragraph ids, their resources' titles and summaries, and neighbouring paragraphs when asked.
 * `security` and `show_hidden` (not in the reference) apply /find's rules: ids the caller may not
 * see are left out, as unknown ones are.
 */
@Closed()
export class HydrateRequest {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: PARAGRAPH_ID_MAX, pattern: PARAGRAPH_ID.source },
    minItems: 1,
    maxItems: HYDRATE_MAX_IDS,
    description: 'Paragraph ids: `{rid}/{field type letter}/{field id}[/{split}]/{start}-{end}`.',
  })
  @Check(
    (v, loc, issues) => {
      if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
      if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
      if (v.length === 0) return void issues.push({ loc, msg: 'List should have at least 1 item', type: 'too_short' });
      if (v.length > HYDRATE_MAX_IDS)
        return void issues.push({ loc, msg: `List should have at most ${HYDRATE_MAX_IDS} items`, type: 'too_long' });
      v.forEach((id, i) => {
        if (typeof id !== 'string' || id.length > PARAGRAPH_ID_MAX || !PARAGRAPH_ID.test(id))
          issues.push({ loc: [...loc, i], msg: 'Input should be a paragraph id', type: 'string_pattern_mismatch' });
      });
    },
    { whenAbsent: true },
  )
  data!: string[];
  @ApiPropertyOptional({ type: HydrateOptions }) @Check(nestedCheck(HydrateOptions, { optional: true })) hydration?: HydrateOptions;
  @ApiPropertyOptional({ type: SecurityFilter }) @Check(securityCheck) security?: SecurityFilter;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) show_hidden?: boolean;
}

export class HydratedResource {
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional() summary?: string;
}

export class HydratedNeighbours {
  @ApiProperty({ type: [String], description: 'Ids of the paragraphs before, nearest last.' }) before!: string[];
  @ApiProperty({ type: [String], description: 'Ids of the paragraphs after, nearest first.' }) after!: string[];
}

export class HydratedRelated {
  @ApiProperty({ type: HydratedNeighbours }) neighbours!: HydratedNeighbours;
}

export class HydratedParagraph {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'Field id: `{rid}/{field type letter}/{field id}`.' }) field!: string;
  @ApiProperty({ description: 'Resource id.' }) resource!: string;
  @ApiPropertyOptional() text?: string;
  @ApiPropertyOptional({ type: HydratedRelated, description: 'Set on the asked paragraphs when neighbours were asked.' })
  related?: HydratedRelated;
}

/** Hydrated: by id; ids unknown or not visible to the caller are left out. */
@ApiExtraModels(HydratedResource, HydratedParagraph)
export class HydrateResponse {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(HydratedResource) } })
  resources!: Record<string, HydratedResource>;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(HydratedParagraph) } })
  paragraphs!: Record<string, HydratedParagraph>;
}

export const HydrateEnvelope = searchPayloadOf(HydrateRequest, 'HydrateEnvelope');
export type HydrateEnvelope = SearchPayload<HydrateRequest>;
