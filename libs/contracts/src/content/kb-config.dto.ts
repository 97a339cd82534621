import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { Check, checks, Closed, isPlainObject, type MemberCheck } from '../common/member-checks';
import { collectIssues } from '../common/validation';
import { AskRequest } from './search/ask.dto';
import { patternCheck } from './search/config-name';
import { FindRequest } from './search/find.dto';

/**
 * A KB's saved configurations (API-MAP 3 "KB configuration services"): search configurations
 * (find/ask presets applied by name), key-value schemas, and split and extract strategies applied
 * by processing to the fields that name them (docs/kb-configuration.md, docs/decisions/0024).
 */
export const KB_CONFIG_LIMITS = {
  searchConfigurations: 50,
  kvSchemas: 20,
  kvSchemaFields: 50,
  /** Split and extract strategies, each kind. */
  strategies: 50,
  /** Characters of a chunk a split strategy asks for. */
  minParagraph: 50,
  maxParagraph: 20_000,
  /** A saved body, as JSON. */
  configBytes: 64 * 1024,
} as const;

/** Key-value schema names and keys: no `/` or `.` (they become filter paths), 1–64 characters. */
export const KV_NAME_PATTERN = /^[^/.]{1,64}$/;
/** Strategy ids are service-generated (32 hex characters). */
export const STRATEGY_ID_PATTERN = /^[0-9a-f]{32}$/;

export const SEARCH_CONFIGURATION_KINDS = ['find', 'ask'] as const;
export type SearchConfigurationKind = (typeof SEARCH_CONFIGURATION_KINDS)[number];

const absent = (v: unknown): boolean => v === undefined || v === null;

/** `check` on a member that must be present ('Field required' otherwise). */
const required =
  (check: MemberCheck): MemberCheck =>
  (v, loc, issues, owner) =>
    absent(v) ? void issues.push({ loc, msg: 'Field required', type: 'missing' }) : check(v, loc, issues, owner);
const nested =
  (cls: new () => object): MemberCheck =>
  (v, loc, issues) =>
    void issues.push(...collectIssues(cls, v, { loc }).issues);

/**
 * The saved body of a search configuration: a /find or /ask body (by `kind` of the owner), checked
 * by the same DTOs as the live requests; `query` is optional in an ask preset, and a preset cannot
 * name another preset.
 */
const searchConfigCheck: MemberCheck = (v, loc, issues, owner) => {
  if (absent(v)) return void issues.push({ loc, msg: 'Field required', type: 'missing' });
  if (!isPlainObject(v)) return void issues.push({ loc, msg: 'Input should be a valid object', type: 'model_type' });
  if (JSON.stringify(v).length > KB_CONFIG_LIMITS.configBytes)
    return void issues.push({ loc, msg: `At most ${KB_CONFIG_LIMITS.configBytes} bytes of JSON`, type: 'too_long' });
  if (v['search_configuration'] !== undefined)
    issues.push({ loc: [...loc, 'search_configuration'], msg: 'A search configuration cannot name another', type: 'extra_forbidden' });
  const rest = { ...v };
  delete rest['search_configuration'];
  const kind = owner['kind'];
  if (kind === 'find') issues.push(...collectIssues(FindRequest, rest, { loc }).issues);
  else if (kind === 'ask') {
    const withQuery = rest['query'] === undefined ? { ...rest, query: 'preset' } : rest;
    issues.push(...collectIssues(AskRequest, withQuery, { loc }).issues);
  }
};

/** `POST|PATCH /search_configurations/{config_name}` body, and what GET returns. */
@Closed()
export class SearchConfigurationDto {
  @ApiProperty({ enum: SEARCH_CONFIGURATION_KINDS, description: 'Which request the preset is a body of.' })
  @Check(required(checks.oneOf(SEARCH_CONFIGURATION_KINDS)), { whenAbsent: true })
  kind!: SearchConfigurationKind;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'A /find body (kind find) or an /ask body whose query is optional (kind ask), without search_configuration; at most 64 KB.',
  })
  @Check(searchConfigCheck, { whenAbsent: true })
  config!: Record<string, unknown>;
}

export const KV_FIELD_TYPES = ['text', 'integer', 'float', 'boolean', 'date'] as const;

const kvFieldCheck: MemberCheck = (v, loc, issues) => {
  if (absent(v)) return;
  if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  if (v.length > KB_CONFIG_LIMITS.kvSchemaFields)
    return void issues.push({ loc, msg: `List should have at most ${KB_CONFIG_LIMITS.kvSchemaFields} items`, type: 'too_long' });
  const keys = new Set<string>();
  v.forEach((f: unknown, i) => {
    const at = [...loc, i];
    if (!isPlainObject(f)) return void issues.push({ loc: at, msg: 'Input should be a valid object', type: 'model_type' });
    for (const k of Object.keys(f))
      if (!['key', 'type', 'description', 'required', 'range'].includes(k))
        issues.push({ loc: [...at, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    const key = f['key'];
    required(patternCheck(KV_NAME_PATTERN))(key, [...at, 'key'], issues, f);
    if (typeof key === 'string' && keys.has(key))
      issues.push({ loc: [...at, 'key'], msg: 'Schema field keys must be unique', type: 'value_error' });
    if (typeof key === 'string') keys.add(key);
    required(checks.oneOf(KV_FIELD_TYPES))(f['type'], [...at, 'type'], issues, f);
    checks.string({ max: 1000 })(f['description'], [...at, 'description'], issues, f);
    checks.bool()(f['required'], [...at, 'required'], issues, f);
    checks.bool()(f['range'], [...at, 'range'], issues, f);
    if (f['range'] === true && !['integer', 'float', 'date'].includes(String(f['type'])))
      issues.push({ loc: [...at, 'range'], msg: `${String(f['type'])} is not an allowed range type`, type: 'value_error' });
  });
};

/** One key of a key-value schema. */
export class KvSchemaField {
  @ApiProperty({ pattern: KV_NAME_PATTERN.source }) key!: string;
  @ApiProperty({ enum: KV_FIELD_TYPES }) type!: (typeof KV_FIELD_TYPES)[number];
  @ApiPropertyOptional({ default: '', maxLength: 1000 }) description?: string;
  @ApiPropertyOptional({ default: true }) required?: boolean;
  @ApiPropertyOptional({ default: false, description: 'Stores a range (integer, float or date only).' }) range?: boolean;
}

/** `POST /kv-schemas` body, and a stored schema. */
@Closed()
export class KvSchemaDto {
  @ApiProperty({ pattern: KV_NAME_PATTERN.source, description: 'Also the schema id, and the id of the key_value field that uses it.' })
  @Check(required(patternCheck(KV_NAME_PATTERN)), { whenAbsent: true })
  name!: string;
  @ApiPropertyOptional({ default: '', maxLength: 1000 }) @Check(checks.string({ max: 1000 })) description?: string;
  @ApiPropertyOptional({ type: [KvSchemaField], maxItems: KB_CONFIG_LIMITS.kvSchemaFields }) @Check(kvFieldCheck) fields?: KvSchemaField[];
}

/** `PUT /kv-schemas/{schema_id}` body: the members given replace the stored ones. */
@Closed()
export class UpdateKvSchemaDto {
  @ApiPropertyOptional({ maxLength: 1000 }) @Check(checks.string({ max: 1000 })) description?: string;
  @ApiPropertyOptional({ type: [KvSchemaField], maxItems: KB_CONFIG_LIMITS.kvSchemaFields }) @Check(kvFieldCheck) fields?: KvSchemaField[];
}

/** `GET /kv-schemas`. */
export class KbKvSchemasDto {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/KvSchemaDto' } }) schemas!: Record<
    string,
    KvSchemaDto
  >;
}

const overlapCheck: MemberCheck = (v, loc, issues, owner) => {
  if (absent(v)) return;
  checks.int(0, KB_CONFIG_LIMITS.maxParagraph / 2)(v, loc, issues, owner);
  const max = owner['max_paragraph'];
  if (typeof v === 'number' && typeof max === 'number' && v > Math.floor(max / 2))
    issues.push({ loc, msg: 'overlap should be at most half of max_paragraph', type: 'less_than_equal' });
};

/** How a text is cut into paragraphs: chunks of at most `max_paragraph` characters, `overlap` shared. */
@Closed()
export class SplitConfigDto {
  @ApiProperty({
    minimum: KB_CONFIG_LIMITS.minParagraph,
    maximum: KB_CONFIG_LIMITS.maxParagraph,
    description: 'Characters of a paragraph at most; longer paragraphs are cut at sentence or word ends.',
  })
  @Check(required(checks.int(KB_CONFIG_LIMITS.minParagraph, KB_CONFIG_LIMITS.maxParagraph)), { whenAbsent: true })
  max_paragraph!: number;
  @ApiPropertyOptional({
    minimum: 0,
    default: 0,
    description: 'Characters a cut paragraph repeats from the end of the one before (at most half of max_paragraph).',
  })
  @Check(overlapCheck)
  overlap?: number;
}

const nameCheck = checks.string({ max: 128, required: true });

/** The reference client's `custom_split` values (NONE, MANUAL, LLM): only NONE is served here. */
const CUSTOM_SPLIT_NONE = 0;

/**
 * `POST /split_strategies` body, and a stored split strategy. Also takes the reference JS SDK's flat
 * form `{name, max_paragraph, custom_split?}` (`createSplitStrategy`), the same as
 * `{name, split: {max_paragraph}}`; a strategy is stored and answered in the `split` form.
 */
@Closed()
export class SplitStrategyDto {
  @ApiProperty({ maxLength: 128 }) @Check(nameCheck) name!: string;
  @ApiPropertyOptional({ type: SplitConfigDto, description: 'Required unless the flat `max_paragraph` is given.' })
  @Check(
    (v, loc, issues, owner) =>
      absent(v) && !absent(owner['max_paragraph']) ? undefined : required(nested(SplitConfigDto))(v, loc, issues, owner),
    {
      whenAbsent: true,
    },
  )
  split?: SplitConfigDto;
  @ApiPropertyOptional({
    minimum: KB_CONFIG_LIMITS.minParagraph,
    maximum: KB_CONFIG_LIMITS.maxParagraph,
    description: "The reference SDK's flat form of `split.max_paragraph` (not with `split`).",
  })
  @Check((v, loc, issues, owner) => {
    if (absent(v)) return;
    if (!absent(owner['split'])) return void issues.push({ loc, msg: 'Give max_paragraph or split, not both', type: 'value_error' });
    checks.int(KB_CONFIG_LIMITS.minParagraph, KB_CONFIG_LIMITS.maxParagraph)(v, loc, issues, owner);
  })
  max_paragraph?: number;
  @ApiPropertyOptional({
    enum: [CUSTOM_SPLIT_NONE],
    description: "The reference SDK's custom split kind: only 0 (none); manual and LLM splits are not available.",
  })
  @Check(checks.unsupported('manual and LLM splits are not available (only 0, none)', (v) => absent(v) || v === CUSTOM_SPLIT_NONE))
  custom_split?: number;
}

/** A split strategy body in its stored form (`{name, split}`), whichever form it came in. */
export function canonicalSplitStrategy(body: SplitStrategyDto): SplitStrategyDto {
  const split = body.split ?? { max_paragraph: body.max_paragraph as number };
  return { name: body.name, split };
}

/** `POST /extract_strategies` body, and a stored extract strategy. */
@Closed()
export class ExtractStrategyDto {
  @ApiProperty({ maxLength: 128 }) @Check(nameCheck) name!: string;
  @ApiPropertyOptional({
    default: true,
    description: 'Read scanned PDF pages and images with OCR (false: only their text layer; images give no text).',
  })
  @Check(checks.bool())
  ocr?: boolean;
  @ApiPropertyOptional({ type: SplitConfigDto, description: 'How the extracted text is split, when the field names no split strategy.' })
  @Check((v, loc, issues, owner) => (absent(v) ? undefined : nested(SplitConfigDto)(v, loc, issues, owner)))
  split?: SplitConfigDto;
}

export type StrategyKind = 'split' | 'extract';

// ---- bus payloads ------------------------------------------------------------------------------

export class KbSettingsRef {
  @IsDefined() @IsString() kbid!: string;
}

export class SearchConfigurationRef extends KbSettingsRef {
  @IsDefined() @IsString() @MaxLength(200) name!: string;
}

export class SetSearchConfigurationRequest extends SearchConfigurationRef {
  @IsDefined() body!: SearchConfigurationDto;
}

export class KvSchemaRef extends KbSettingsRef {
  @IsDefined() @IsString() @MaxLength(200) schema_id!: string;
}

export class CreateKvSchemaRequest extends KbSettingsRef {
  @IsDefined() body!: KvSchemaDto;
}

export class UpdateKvSchemaRequest extends KvSchemaRef {
  @IsDefined() body!: UpdateKvSchemaDto;
}

export class StrategiesRef extends KbSettingsRef {
  @IsIn(['split', 'extract']) kind!: StrategyKind;
}

export class StrategyRef extends StrategiesRef {
  @IsDefined() @IsString() @MaxLength(200) strategy_id!: string;
}

export class CreateStrategyRequest extends StrategiesRef {
  @IsDefined() body!: SplitStrategyDto | ExtractStrategyDto;
}

/** The strategies a processing job's field names (the worker asks content for them). */
export class ResolveStrategiesRequest extends KbSettingsRef {
  @IsOptional() @IsString() @MaxLength(200) split?: string;
  @IsOptional() @IsString() @MaxLength(200) extract?: string;
}

/** Unknown or deleted ones are absent: the field is processed with the defaults. */
export interface ResolvedStrategies {
  split?: SplitConfigDto;
  extract?: Omit<ExtractStrategyDto, 'name'>;
}
