import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { ValidationIssue } from '../../common/errors';
import { Check, checks, Closed, isPlainObject, type Loc, type MemberCheck } from '../../common/member-checks';
import { nestedCheck } from '../../common/validation';
import { SecurityFilter } from './find.dto';
import { PARAGRAPH_ID, PARAGRAPH_ID_MAX } from './hydrate.dto';
import { securityCheck } from './retrieval.dto';
import { searchPayloadOf, type SearchPayload } from './search-payload';

/** Ids one /augment may name in all (resources, fields and paragraphs together). */
export const AUGMENT_MAX_IDS = 100;
/** Entries of each of `resources`, `fields` and `paragraphs`. */
export const AUGMENT_MAX_ENTRIES = 10;
/** Neighbours asked on each side of a paragraph at most. */
export const AUGMENT_MAX_NEIGHBOURS = 10;
/** A field's text is cut to this many characters (`text_truncated` says so). */
export const AUGMENT_MAX_FIELD_TEXT = 100_000;

const RID = '[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}';
/** A resource id, with or without dashes. */
export const RESOURCE_ID = new RegExp(`^${RID}$`, 'i');
/** `{rid}/{field type letter}/{field id}[/{split}]`. */
export const FIELD_ID = new RegExp(`^${RID}/[a-z]/[^/]{1,250}(/[^/]{1,128})?$`, 'i');
const FIELD_ID_MAX = 420;

/** `given`: 1 to AUGMENT_MAX_IDS items, each reported at its index by `item`. */
function givenCheck(item: (v: unknown, loc: Loc, issues: ValidationIssue[]) => void): MemberCheck {
  const check: MemberCheck = (v, loc, issues) => {
    if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
    if (v.length === 0) return void issues.push({ loc, msg: 'List should have at least 1 item', type: 'too_short' });
    if (v.length > AUGMENT_MAX_IDS)
      return void issues.push({ loc, msg: `List should have at most ${AUGMENT_MAX_IDS} items`, type: 'too_long' });
    v.forEach((x, i) => item(x, [...loc, i], issues));
  };
  return Object.assign(check, { whenAbsent: true });
}

const idCheck =
  (pattern: RegExp, max: number, what: string) =>
  (v: unknown, loc: Loc, issues: ValidationIssue[]): void => {
    if (v === undefined || v === null) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
    if (typeof v !== 'string' || v.length > max || !pattern.test(v))
      issues.push({ loc, msg: `Input should be a ${what} id`, type: 'string_pattern_mismatch' });
  };

/** A list of up to AUGMENT_MAX_ENTRIES objects of `cls`, each checked at its index. */
function entriesCheck(cls: new () => object): MemberCheck {
  return (v, loc, issues, owner) => {
    if (v === undefined || v === null) return;
    if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
    if (v.length > AUGMENT_MAX_ENTRIES)
      return void issues.push({ loc, msg: `List should have at most ${AUGMENT_MAX_ENTRIES} items`, type: 'too_long' });
    v.forEach((x, i) => nestedCheck(cls)(x, [...loc, i], issues, owner));
  };
}

/** The ids of a request in all, at most AUGMENT_MAX_IDS (reported once, at the body). */
const totalIdsCheck: MemberCheck = (_v, loc, issues, owner) => {
  let n = 0;
  for (const kind of ['resources', 'fields', 'paragraphs']) {
    const entries = owner[kind];
    if (!Array.isArray(entries)) continue;
    for (const e of entries) if (isPlainObject(e) && Array.isArray(e['given'])) n += e['given'].length;
  }
  if (n > AUGMENT_MAX_IDS)
    issues.push({
      loc: loc.slice(0, -1),
      msg: `At most ${AUGMENT_MAX_IDS} ids in all (resources, fields and paragraphs)`,
      type: 'too_long',
    });
};

@Closed()
export class AugmentResources {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: RESOURCE_ID.source },
    minItems: 1,
    maxItems: AUGMENT_MAX_IDS,
    description: 'Resource ids (with or without dashes).',
  })
  @Check(givenCheck(idCheck(RESOURCE_ID, 36, 'resource')))
  given!: string[];
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) title?: boolean;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) summary?: boolean;
  @ApiPropertyOptional({ default: false, description: 'slug, icon, created, modified.' }) @Check(checks.bool()) basic?: boolean;
  @ApiPropertyOptional({ default: false, description: "The resource's labels by label set." })
  @Check(checks.bool())
  classification_labels?: boolean;
}

@Closed()
export class AugmentFields {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', maxLength: FIELD_ID_MAX, pattern: FIELD_ID.source },
    minItems: 1,
    maxItems: AUGMENT_MAX_IDS,
    description: 'Field ids: `{rid}/{field type letter}/{field id}[/{split}]`.',
  })
  @Check(givenCheck(idCheck(FIELD_ID, FIELD_ID_MAX, 'field')))
  given!: string[];
  @ApiPropertyOptional({
    default: false,
    description: `The field's text (its paragraphs in order), cut to ${AUGMENT_MAX_FIELD_TEXT} characters.`,
  })
  @Check(checks.bool())
  text?: boolean;
}

@Closed()
export class AugmentParagraph {
  @ApiProperty({
    maxLength: PARAGRAPH_ID_MAX,
    pattern: PARAGRAPH_ID.source,
    description: '`{rid}/{field type letter}/{field id}[/{split}]/{start}-{end}`.',
  })
  @Check((v, loc, issues) => idCheck(PARAGRAPH_ID, PARAGRAPH_ID_MAX, 'paragraph')(v, loc, issues), { whenAbsent: true })
  id!: string;
}

@Closed()
export class AugmentParagraphs {
  @ApiProperty({ type: [AugmentParagraph], minItems: 1, maxItems: AUGMENT_MAX_IDS })
  @Check(givenCheck((v, loc, issues) => nestedCheck(AugmentParagraph)(v, loc, issues, {})))
  given!: AugmentParagraph[];
  @ApiPropertyOptional({ default: true }) @Check(checks.bool()) text?: boolean;
  @ApiPropertyOptional({ minimum: 0, maximum: AUGMENT_MAX_NEIGHBOURS, default: 0 })
  @Check(checks.int(0, AUGMENT_MAX_NEIGHBOURS))
  neighbours_before?: number;
  @ApiPropertyOptional({ minimum: 0, maximum: AUGMENT_MAX_NEIGHBOURS, default: 0 })
  @Check(checks.int(0, AUGMENT_MAX_NEIGHBOURS))
  neighbours_after?: number;
}

/**
 * POST /kb/{kbid}/augment (a hidden route of the reference): given resources, fields and
 * paragraphs by id, what the RAG strategies add — titles, summaries, labels, a field's text,
 * neighbouring paragraphs — without a search. `security` and `show_hidden` (not in the
 * reference) apply /find's rules: ids the caller may not see are left out, as unknown ones are.
 */
@Closed()
export class AugmentRequest {
  @ApiPropertyOptional({ type: [AugmentResources], maxItems: AUGMENT_MAX_ENTRIES })
  @Check(entriesCheck(AugmentResources))
  resources?: AugmentResources[];
  @ApiPropertyOptional({ type: [AugmentFields], maxItems: AUGMENT_MAX_ENTRIES })
  @Check(entriesCheck(AugmentFields))
  fields?: AugmentFields[];
  @ApiPropertyOptional({
    type: [AugmentParagraphs],
    maxItems: AUGMENT_MAX_ENTRIES,
    description: `At most ${AUGMENT_MAX_IDS} ids in all (resources, fields and paragraphs).`,
  })
  @Check(
    (v, loc, issues, owner) => {
      entriesCheck(AugmentParagraphs)(v, loc, issues, owner);
      totalIdsCheck(v, loc, issues, owner);
    },
    { whenAbsent: true },
  )
  paragraphs?: AugmentParagraphs[];
  @ApiPropertyOptional({ type: SecurityFilter }) @Check(securityCheck) security?: SecurityFilter;
  @ApiPropertyOptional({ default: false }) @Check(checks.bool()) show_hidden?: boolean;
}

export class AugmentedResource {
  @ApiProperty() id!: string;
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional() summary?: string;
  @ApiPropertyOptional() slug?: string;
  @ApiPropertyOptional() icon?: string;
  @ApiPropertyOptional({ format: 'date-time' }) created?: string;
  @ApiPropertyOptional({ format: 'date-time' }) modified?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } })
  classification_labels?: Record<string, string[]>;
}

export class AugmentedField {
  @ApiPropertyOptional() text?: string;
  @ApiPropertyOptional({ description: `Set when the text was cut to ${AUGMENT_MAX_FIELD_TEXT} characters.` }) text_truncated?: boolean;
}

export class AugmentedPosition {
  @ApiProperty() index!: number;
  @ApiProperty() start!: number;
  @ApiProperty() end!: number;
  @ApiPropertyOptional({ type: 'integer', nullable: true }) page_number?: number | null;
}

export class AugmentedParagraph {
  @ApiPropertyOptional() text?: string;
  @ApiProperty({ type: AugmentedPosition }) position!: AugmentedPosition;
  @ApiPropertyOptional({ type: [String], description: 'Ids of the paragraphs before, nearest last (when asked).' })
  neighbours_before?: string[];
  @ApiPropertyOptional({ type: [String], description: 'Ids of the paragraphs after, nearest first (when asked).' })
  neighbours_after?: string[];
}

/** Augmented: by id; ids unknown or not visible to the caller are left out. */
@ApiExtraModels(AugmentedResource, AugmentedField, AugmentedParagraph)
export class AugmentResponse {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(AugmentedResource) } })
  resources!: Record<string, AugmentedResource>;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(AugmentedField) } })
  fields!: Record<string, AugmentedField>;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(AugmentedParagraph) } })
  paragraphs!: Record<string, AugmentedParagraph>;
}

export const AugmentEnvelope = searchPayloadOf(AugmentRequest, 'AugmentEnvelope');
export type AugmentEnvelope = SearchPayload<AugmentRequest>;
