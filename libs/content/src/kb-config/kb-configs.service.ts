import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  canonicalSplitStrategy,
  AskRequest,
  CONFIG_NAME_PATTERN,
  DomainError,
  ErrorCodes,
  ExtractStrategyDto,
  FindRequest,
  KB_CONFIG_LIMITS,
  KvSchemaDto,
  kvSchemaIssues,
  normaliseKvValues,
  SearchConfigurationDto,
  SplitStrategyDto,
  STRATEGY_ID_PATTERN,
  UpdateKvSchemaDto,
  validatePayload,
  type KbKvSchemasDto,
  type KvValue,
  type ResolvedStrategies,
  type SearchConfigurationKind,
  type StrategyKind,
} from '@kb/contracts';
import { KbConfigsRepository, type KbConfigKind } from './kb-configs.repository';

type Strategy = SplitStrategyDto | ExtractStrategyDto;

const notFound = (what: string) => new DomainError(ErrorCodes.NOT_FOUND, `${what} does not exist`);
const STRATEGY_NAMES: Record<StrategyKind, string> = { split: 'Split strategy', extract: 'Extract strategy' };

/**
 * A KB's saved configurations (docs/kb-configuration.md): search configurations and the request
 * bodies they make, key-value schemas, and split and extract strategies with what processing
 * reads of them. Every body is checked by the DTO of its route (saved search bodies by the live
 * /find and /ask DTOs), and every kind is bounded per KB.
 */
@Injectable()
export class KbConfigsService {
  constructor(private readonly repo: KbConfigsRepository) {}

  // ---- search configurations ----------------------------------------------------------------

  async listSearch(kbid: string): Promise<Record<string, SearchConfigurationDto>> {
    const rows = await this.repo.list<SearchConfigurationDto>(kbid, 'search', KB_CONFIG_LIMITS.searchConfigurations);
    return Object.fromEntries(rows.map((r) => [r.id, r.body]));
  }

  async getSearch(kbid: string, name: string): Promise<SearchConfigurationDto> {
    const found = await this.repo.get<SearchConfigurationDto>(kbid, 'search', name);
    if (!found) throw notFound('Search configuration');
    return found;
  }

  async createSearch(kbid: string, name: string, body: unknown): Promise<Record<string, never>> {
    checkName(name);
    const config = searchConfigurationOf(body);
    await this.repo.insert(kbid, 'search', name, config, {
      max: KB_CONFIG_LIMITS.searchConfigurations,
      conflict: 'Search configuration already exists',
      tooMany: {
        loc: ['path', 'config_name'],
        msg: `A Knowledge Box keeps at most ${KB_CONFIG_LIMITS.searchConfigurations} search configurations`,
      },
    });
    return {};
  }

  async updateSearch(kbid: string, name: string, body: unknown): Promise<Record<string, never>> {
    const config = searchConfigurationOf(body);
    if (!(await this.repo.update(kbid, 'search', name, config))) throw notFound('Search configuration');
    return {};
  }

  async deleteSearch(kbid: string, name: string): Promise<Record<string, never>> {
    if (!(await this.repo.delete(kbid, 'search', name))) throw notFound('Search configuration');
    return {};
  }

  /**
   * The body a /find or /ask request stands for. Without `search_configuration` it is the request
   * itself. With one, the saved body of that name (of the same kind) is the base and every member
   * the request gives replaces the saved member whole (objects and lists are not merged); the
   * result is checked again by the live DTO. An unknown name, or one of the other kind, is 422.
   */
  async applySearch<T extends FindRequest | AskRequest>(kbid: string, body: T, kind: SearchConfigurationKind): Promise<T> {
    const name = body.search_configuration;
    if (name === undefined || name === null) return body;
    const loc = ['body', 'search_configuration'];
    const saved = typeof name === 'string' ? await this.repo.get<SearchConfigurationDto>(kbid, 'search', name) : undefined;
    if (!saved) throw DomainError.validation([{ loc, msg: `Search configuration ${String(name)} does not exist`, type: 'value_error' }]);
    if (saved.kind !== kind)
      throw DomainError.validation([
        { loc, msg: `Search configuration ${String(name)} is a ${saved.kind} configuration, not ${kind}`, type: 'value_error' },
      ]);
    // The saved body with the request's members over it, checked by the live DTO of its kind.
    return validatePayload(kind === 'find' ? FindRequest : AskRequest, mergeSearchBody(saved.config, body), { loc: ['body'] }) as T;
  }

  // ---- key-value schemas --------------------------------------------------------------------

  async listKv(kbid: string): Promise<KbKvSchemasDto> {
    const rows = await this.repo.list<KvSchemaDto>(kbid, 'kv_schema', KB_CONFIG_LIMITS.kvSchemas);
    return { schemas: Object.fromEntries(rows.map((r) => [r.id, r.body])) };
  }

  async getKv(kbid: string, id: string): Promise<KvSchemaDto> {
    const found = await this.repo.get<KvSchemaDto>(kbid, 'kv_schema', id);
    if (!found) throw notFound('Key-value schema');
    return found;
  }

  async createKv(kbid: string, body: unknown): Promise<KvSchemaDto> {
    const dto = validatePayload(KvSchemaDto, body ?? {}, { loc: ['body'] });
    const schema = kvSchema(dto.name, dto.description, dto.fields);
    await this.repo.insert(kbid, 'kv_schema', schema.name, schema, {
      max: KB_CONFIG_LIMITS.kvSchemas,
      conflict: `Key-value schema ${schema.name} already exists`,
      tooMany: { loc: ['body', 'name'], msg: `A Knowledge Box keeps at most ${KB_CONFIG_LIMITS.kvSchemas} key-value schemas` },
    });
    return schema;
  }

  async updateKv(kbid: string, id: string, body: unknown): Promise<KvSchemaDto> {
    const dto = validatePayload(UpdateKvSchemaDto, body ?? {}, { loc: ['body'] });
    const current = await this.getKv(kbid, id);
    const schema = kvSchema(current.name, dto.description ?? current.description, dto.fields ?? current.fields);
    if (!(await this.repo.update(kbid, 'kv_schema', id, schema))) throw notFound('Key-value schema');
    return schema;
  }

  async deleteKv(kbid: string, id: string): Promise<Record<string, never>> {
    if (!(await this.repo.delete(kbid, 'kv_schema', id))) throw notFound('Key-value schema');
    return {};
  }

  // ---- split and extract strategies ---------------------------------------------------------

  async listStrategies(kbid: string, kind: StrategyKind): Promise<Record<string, Strategy>> {
    const rows = await this.repo.list<Strategy>(kbid, kind, KB_CONFIG_LIMITS.strategies);
    return Object.fromEntries(rows.map((r) => [r.id, r.body]));
  }

  async getStrategy(kbid: string, kind: StrategyKind, id: string): Promise<Strategy> {
    const found = STRATEGY_ID_PATTERN.test(id) ? await this.repo.get<Strategy>(kbid, kind, id) : undefined;
    if (!found) throw notFound(STRATEGY_NAMES[kind]);
    return found;
  }

  async createStrategy(kbid: string, kind: StrategyKind, body: unknown): Promise<{ id: string }> {
    const dto: Strategy =
      kind === 'split'
        ? canonicalSplitStrategy(validatePayload(SplitStrategyDto, body ?? {}, { loc: ['body'] }))
        : validatePayload(ExtractStrategyDto, body ?? {}, { loc: ['body'] });
    const id = randomUUID().replace(/-/g, '');
    await this.repo.insert(kbid, kind, id, JSON.parse(JSON.stringify(dto)), {
      max: KB_CONFIG_LIMITS.strategies,
      conflict: `${STRATEGY_NAMES[kind]} ${id} already exists`,
      tooMany: { loc: ['body'], msg: `A Knowledge Box keeps at most ${KB_CONFIG_LIMITS.strategies} ${kind} strategies` },
    });
    return { id };
  }

  async deleteStrategy(kbid: string, kind: StrategyKind, id: string): Promise<Record<string, never>> {
    if (!STRATEGY_ID_PATTERN.test(id) || !(await this.repo.delete(kbid, kind, id))) throw notFound(STRATEGY_NAMES[kind]);
    return {};
  }

  /** What processing applies to a field naming these strategies (unknown or deleted ones: the defaults). */
  async resolveStrategies(kbid: string, names: { split?: string; extract?: string }): Promise<ResolvedStrategies> {
    const out: ResolvedStrategies = {};
    const split =
      names.split && STRATEGY_ID_PATTERN.test(names.split) ? await this.repo.get<SplitStrategyDto>(kbid, 'split', names.split) : undefined;
    const extract =
      names.extract && STRATEGY_ID_PATTERN.test(names.extract)
        ? await this.repo.get<ExtractStrategyDto>(kbid, 'extract', names.extract)
        : undefined;
    if (split) out.split = split.split;
    if (extract)
      out.extract = { ...(extract.ocr !== undefined ? { ocr: extract.ocr } : {}), ...(extract.split ? { split: extract.split } : {}) };
    return out;
  }

  // ---- export and import (docs/export-format.md) --------------------------------------------

  /** Every saved configuration of the KB, as an archive carries them. */
  exportAll(kbid: string): Promise<ArchivedKbConfig[]> {
    return this.repo.all(kbid);
  }

  /**
   * Refuses (422) an import whose configurations would leave a kind of the KB over its bound,
   * counting the KB's own that the archive does not replace. Checked again when written.
   */
  async assertRoom(kbid: string, rows: ArchivedKbConfig[]): Promise<void> {
    const kept = await this.repo.countsExcept(kbid, rows);
    for (const kind of KB_CONFIG_KINDS) {
      const n = (kept.get(kind) ?? 0) + rows.filter((r) => r.kind === kind).length;
      if (n > kbConfigLimit(kind))
        throw DomainError.validation([
          { loc: ['body'], msg: `A Knowledge Box keeps at most ${kbConfigLimit(kind)} ${kind} configurations`, type: 'too_long' },
        ]);
    }
  }

  /** Writes an archive's configurations (replacing those of the same id); returns the ones it created. */
  importAll(kbid: string, rows: ArchivedKbConfig[]): Promise<KbConfigRef[]> {
    return this.repo.upsertMany(kbid, rows, kbConfigLimit);
  }

  /** Removes what `importAll` created (an import that failed after writing them). */
  async removeImported(kbid: string, created: KbConfigRef[]): Promise<void> {
    for (const c of created) await this.repo.delete(kbid, c.kind, c.id);
  }

  /**
   * key_value writes checked against the KB's key-value schema of the same id, when there is one
   * (422 at each value, `locOf` + `values` + key); their dates are then stored in one ISO form.
   */
  async checkKeyValues<W extends { fieldType: string; fieldId: string; value: Record<string, unknown> }>(
    kbid: string,
    writes: W[],
    locOf: (w: W) => (string | number)[],
  ): Promise<void> {
    const kv = writes.filter((w) => w.fieldType === 'key_value');
    if (kv.length === 0) return;
    const schemas = await this.repo.getMany<KvSchemaDto>(kbid, 'kv_schema', [...new Set(kv.map((w) => w.fieldId))]);
    const issues = kv.flatMap((w) => {
      const schema = schemas.get(w.fieldId);
      const values = w.value['values'] as Record<string, KvValue>;
      return schema ? kvSchemaIssues(schema, values, [...locOf(w), 'values']) : [];
    });
    if (issues.length > 0) throw DomainError.validation(issues);
    for (const w of kv) w.value['values'] = normaliseKvValues(w.value['values'] as Record<string, KvValue>, schemas.get(w.fieldId));
  }

  /** `assertStrategies` for field writes: `locOf` says where each write's members were sent. */
  async assertFieldStrategies<W extends { fieldType: string; fieldId: string; value: Record<string, unknown> }>(
    kbid: string,
    writes: W[],
    locOf: (w: W) => (string | number)[],
  ): Promise<void> {
    const named: { kind: StrategyKind; id: string; loc: (string | number)[] }[] = [];
    for (const w of writes) {
      for (const kind of ['split', 'extract'] as const) {
        const id = w.value[`${kind}_strategy`];
        if (typeof id === 'string' && id) named.push({ kind, id, loc: [...locOf(w), `${kind}_strategy`] });
      }
    }
    await this.assertStrategies(kbid, named);
  }

  /**
   * Field writes naming strategies the KB does not have are refused (422 at each naming member),
   * so a typo is not silently processed with the defaults.
   */
  async assertStrategies(kbid: string, named: { kind: StrategyKind; id: string; loc: (string | number)[] }[]): Promise<void> {
    if (named.length === 0) return;
    const issues = [];
    for (const kind of ['split', 'extract'] as const) {
      const wanted = named.filter((n) => n.kind === kind);
      if (wanted.length === 0) continue;
      const found = await this.repo.getMany(kbid, kind, [...new Set(wanted.map((n) => n.id))]);
      for (const n of wanted)
        if (!found.has(n.id))
          issues.push({ loc: n.loc, msg: `${STRATEGY_NAMES[kind]} ${n.id} does not exist in this Knowledge Box`, type: 'value_error' });
    }
    if (issues.length > 0) throw DomainError.validation(issues);
  }
}

/** One saved configuration, by kind and id. */
export interface KbConfigRef {
  kind: KbConfigKind;
  id: string;
}

/** One saved configuration as an archive carries it (`kb-configs.jsonl`, docs/export-format.md). */
export interface ArchivedKbConfig extends KbConfigRef {
  body: unknown;
}

export const KB_CONFIG_KINDS: readonly KbConfigKind[] = ['search', 'kv_schema', 'split', 'extract'];

/** How many of a kind a KB keeps. */
export function kbConfigLimit(kind: KbConfigKind): number {
  if (kind === 'search') return KB_CONFIG_LIMITS.searchConfigurations;
  if (kind === 'kv_schema') return KB_CONFIG_LIMITS.kvSchemas;
  return KB_CONFIG_LIMITS.strategies;
}

/**
 * An archived configuration checked as its route checks it (name or id pattern, body by the
 * route's DTO) and in its stored form; DomainError (422) otherwise. A key-value schema's id is its name.
 */
export function checkArchivedKbConfig(line: unknown): ArchivedKbConfig {
  const at = (loc: string, msg: string) => DomainError.validation([{ loc: [loc], msg, type: 'value_error' }]);
  if (!line || typeof line !== 'object' || Array.isArray(line)) throw at('line', 'should be an object {kind, id, body}');
  const { kind, id, body, ...rest } = line as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw at(Object.keys(rest)[0] as string, 'Extra inputs are not permitted');
  if (typeof kind !== 'string' || !(KB_CONFIG_KINDS as readonly string[]).includes(kind))
    throw at('kind', `should be one of ${KB_CONFIG_KINDS.join(', ')}`);
  if (typeof id !== 'string') throw at('id', 'should be a string');
  switch (kind as KbConfigKind) {
    case 'search':
      if (!CONFIG_NAME_PATTERN.test(id)) throw at('id', `should match pattern '${CONFIG_NAME_PATTERN.source}'`);
      return { kind: 'search', id, body: searchConfigurationOf(body) };
    case 'kv_schema': {
      const dto = validatePayload(KvSchemaDto, body ?? {}, { loc: ['body'] });
      if (dto.name !== id) throw at('id', 'should be the schema name');
      return { kind: 'kv_schema', id, body: kvSchema(dto.name, dto.description, dto.fields) };
    }
    case 'split':
    case 'extract': {
      if (!STRATEGY_ID_PATTERN.test(id)) throw at('id', `should match pattern '${STRATEGY_ID_PATTERN.source}'`);
      const dto =
        kind === 'split'
          ? canonicalSplitStrategy(validatePayload(SplitStrategyDto, body ?? {}, { loc: ['body'] }))
          : validatePayload(ExtractStrategyDto, body ?? {}, { loc: ['body'] });
      return { kind: kind as KbConfigKind, id, body: JSON.parse(JSON.stringify(dto)) as unknown };
    }
  }
}

/** The merge rule: the saved members, each member the request gives replacing the saved one whole. */
export function mergeSearchBody(saved: Record<string, unknown>, request: object): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...saved };
  for (const [key, value] of Object.entries(request)) if (value !== undefined && key !== 'search_configuration') merged[key] = value;
  return merged;
}

function checkName(name: string): void {
  if (!CONFIG_NAME_PATTERN.test(name)) {
    throw DomainError.validation([
      { loc: ['path', 'config_name'], msg: `String should match pattern '${CONFIG_NAME_PATTERN.source}'`, type: 'string_pattern_mismatch' },
    ]);
  }
}

/** The body as stored: kind and the saved request members that were given. */
function searchConfigurationOf(body: unknown): SearchConfigurationDto {
  const dto = validatePayload(SearchConfigurationDto, body ?? {}, { loc: ['body'] });
  return { kind: dto.kind, config: JSON.parse(JSON.stringify(dto.config)) as Record<string, unknown> };
}

function kvSchema(name: string, description: string | undefined, fields: KvSchemaDto['fields']): KvSchemaDto {
  return {
    name,
    description: description ?? '',
    fields: (fields ?? []).map((f) => ({
      key: f.key,
      type: f.type,
      description: f.description ?? '',
      required: f.required ?? true,
      range: f.range ?? false,
    })),
  };
}
