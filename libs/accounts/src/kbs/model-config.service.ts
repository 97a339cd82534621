import { Inject, Injectable } from '@nestjs/common';
import {
  AccountsSubjects,
  BUILTIN_GENERATIVE_MODEL,
  BUILTIN_SEMANTIC_MODEL,
  DomainError,
  ErrorCodes,
  GENERATIVE_MODELS,
  LEARNING_DEFAULTS,
  SEMANTIC_MODELS,
  SIMPLE_OPTIONS,
  semanticModelInfo,
  semanticModelNeedsKey,
  keepMaskedSecrets,
  learningConfigurationIssues,
  maskSecrets,
  type KbConfigRef,
  type KbVectorsetsDto,
  type LearningConfigurationSchemaDto,
  type ModelConfigurationDto,
  type SemanticModelChangeRequest,
  type SetKbConfigRequest,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE, ACCOUNTS_OPTIONS, type AccountsOptions } from '../accounts.tokens';
import { AccountsOutbox, outboxEvent } from '../outbox/accounts-outbox';
import { seal, unseal } from '../credentials/sealed';
import { KbsRepository } from './kbs.repository';

const option = (name: string, provider: string, userKey: boolean) => ({
  name,
  value: name,
  provider,
  user_prompt: provider !== 'builtin',
  user_key: userKey,
});

/** Per-KB model configuration (spec 4.5–4.6): the schema of choices, and the KB's own choices. */
@Injectable()
export class ModelConfigService {
  constructor(
    @Inject(ACCOUNTS_OPTIONS) private readonly options: AccountsOptions,
    @Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: AccountsOutbox,
    private readonly kbs: KbsRepository,
  ) {}

  schema(): LearningConfigurationSchemaDto {
    const semantic = Object.entries(SEMANTIC_MODELS).map(([name, m]) => option(name, m.provider, semanticModelNeedsKey(m)));
    const generative = Object.entries(GENERATIVE_MODELS).map(([name, p]) => option(name, p ?? 'builtin', p !== null));
    const simple = (values: readonly string[], dflt: string) => ({
      options: values.map((v) => option(v, 'builtin', false)),
      default: dflt,
      create: true,
      update: true,
      multiple: false,
    });
    const free = { schemas: {}, create: true, update: true };
    return {
      semantic_model: { options: semantic, default: BUILTIN_SEMANTIC_MODEL, create: true, update: false, multiple: false },
      semantic_models: { options: semantic, default: [BUILTIN_SEMANTIC_MODEL], create: true, update: false, multiple: true },
      default_semantic_model: { options: semantic, default: BUILTIN_SEMANTIC_MODEL, create: true, update: true, multiple: false },
      generative_model: { options: generative, default: BUILTIN_GENERATIVE_MODEL, create: true, update: true, multiple: false },
      summary_model: { options: generative, default: BUILTIN_GENERATIVE_MODEL, create: true, update: true, multiple: false },
      anonymization_model: simple(SIMPLE_OPTIONS.anonymization_model, 'disabled'),
      visual_labeling: simple(SIMPLE_OPTIONS.visual_labeling, 'disabled'),
      ner_model: simple(SIMPLE_OPTIONS.ner_model, 'multilingual'),
      relation_model: simple(SIMPLE_OPTIONS.relation_model, 'base'),
      summary: simple(SIMPLE_OPTIONS.summary, 'simple'),
      user_keys: free,
      user_prompts: free,
      summary_prompt: free,
      prefer_markdown_generative_response: { schemas: { type: 'boolean' }, create: true, update: true },
    };
  }

  /**
   * The configuration with the provider credentials in clear, for the services that call the
   * providers (content for /ask, understanding for embeddings). Only on the internal bus: no
   * gateway route reaches it.
   */
  async resolve(ref: KbConfigRef): Promise<Record<string, unknown>> {
    const stored = await this.stored(ref.kb_id);
    const userKeys =
      typeof stored['user_keys'] === 'string' ? unseal<Record<string, unknown>>(this.options.secret, stored['user_keys']) : null;
    return { ...(await this.get(ref)), user_keys: userKeys };
  }

  async get(ref: KbConfigRef): Promise<ModelConfigurationDto> {
    const stored = await this.stored(ref.kb_id);
    const userKeys =
      typeof stored['user_keys'] === 'string' ? unseal<Record<string, unknown>>(this.options.secret, stored['user_keys']) : null;
    const models = (stored['semantic_models'] as string[] | undefined) ?? [BUILTIN_SEMANTIC_MODEL];
    const dflt = (stored['default_semantic_model'] as string | undefined) ?? models[0] ?? BUILTIN_SEMANTIC_MODEL;
    const info = semanticModelInfo(dflt) ?? (SEMANTIC_MODELS[BUILTIN_SEMANTIC_MODEL] as (typeof SEMANTIC_MODELS)[string]);
    return {
      ...LEARNING_DEFAULTS,
      ...stored,
      user_keys: userKeys ? maskSecrets(userKeys) : null,
      resource_labelers_models: [],
      paragraph_labelers_models: [],
      intent_models: [],
      semantic_model: dflt,
      semantic_models: models,
      default_semantic_model: dflt,
      semantic_vector_similarity: info.similarity,
      semantic_vector_size: info.size,
      semantic_matryoshka_dims: info.matryoshka_dims,
      semantic_threshold: info.threshold,
      semantic_model_configs: Object.fromEntries(models.map((m) => [m, semanticModelInfo(m) ?? null])),
    };
  }

  async set(req: SetKbConfigRequest): Promise<ModelConfigurationDto> {
    const current = await this.stored(req.kb_id);
    const currentKeys =
      typeof current['user_keys'] === 'string' ? unseal<Record<string, unknown>>(this.options.secret, current['user_keys']) : null;
    const incoming = { ...req.config };
    // A configuration read back (its keys masked) and sent again keeps the stored keys.
    if (incoming['user_keys'] !== undefined && incoming['user_keys'] !== null)
      incoming['user_keys'] = keepMaskedSecrets(incoming['user_keys'], currentKeys);
    // Checks see the provider keys the KB will have after this change.
    const effectiveKeys = incoming['user_keys'] === undefined ? currentKeys : incoming['user_keys'];
    const issues = learningConfigurationIssues(
      { ...incoming, user_keys: effectiveKeys },
      ['body'],
      req.mode === 'add' ? 'create' : 'update',
    );
    if (
      req.mode === 'update' &&
      incoming['default_semantic_model'] &&
      !((current['semantic_models'] as string[] | undefined) ?? []).includes(incoming['default_semantic_model'] as string)
    ) {
      issues.push({
        loc: ['body', 'default_semantic_model'],
        msg: 'default_semantic_model must be one of the semantic models of the Knowledge Box',
        type: 'value_error',
      });
    }
    if (issues.length > 0) throw DomainError.validation(issues);
    if (incoming['semantic_model'] !== undefined) {
      incoming['semantic_models'] = [
        ...new Set([...((incoming['semantic_models'] as string[] | undefined) ?? []), incoming['semantic_model'] as string]),
      ];
      delete incoming['semantic_model'];
    }
    if (incoming['user_keys'] !== undefined)
      incoming['user_keys'] = incoming['user_keys'] === null ? null : seal(this.options.secret, incoming['user_keys']);
    const next = req.mode === 'add' ? { ...LEARNING_DEFAULTS, ...incoming } : { ...current, ...incoming };
    await this.outbox.commit(this.ds, async (m) => {
      await this.kbs.update(req.kb_id, { learningConfiguration: next }, m);
      return { result: undefined, events: [outboxEvent(AccountsSubjects.accessChanged, { kb_ids: [req.kb_id] })] };
    });
    return this.get(req);
  }

  /** The KB's semantic models, each with the name its vectors are stored under. */
  async vectorsets(ref: KbConfigRef): Promise<KbVectorsetsDto> {
    const config = await this.resolve(ref);
    const keys = (config['user_keys'] ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const dflt = config['default_semantic_model'] as string;
    return {
      vectorsets: (config['semantic_models'] as string[]).map((id) => ({ id, vectorset: storedVectorset(id, keys), default: id === dflt })),
    };
  }

  /**
   * Adds a semantic model to a KB (`POST /kb/{kbid}/vectorsets/{id}`, Add A Model To A Kb). Content
   * then vectorises the KB's existing content with it in the background. Adding one it has is a no-op.
   */
  async addSemanticModel(req: SemanticModelChangeRequest): Promise<KbVectorsetsDto> {
    const current = await this.stored(req.kb_id);
    const models = (current['semantic_models'] as string[] | undefined) ?? [BUILTIN_SEMANTIC_MODEL];
    if (models.includes(req.model)) return this.vectorsets(req);
    const keys =
      typeof current['user_keys'] === 'string' ? unseal<Record<string, unknown>>(this.options.secret, current['user_keys']) : null;
    const issues = learningConfigurationIssues({ semantic_models: [req.model], user_keys: keys }, ['path'], 'create')
      .filter((i) => i.loc[1] === 'semantic_models')
      .map((i) => ({ ...i, loc: ['path', 'vectorset_id'] }));
    if (issues.length > 0) throw DomainError.validation(issues);
    await this.outbox.commit(this.ds, async (m) => {
      await this.kbs.update(req.kb_id, { learningConfiguration: { ...current, semantic_models: [...models, req.model] } }, m);
      return {
        result: undefined,
        events: [
          outboxEvent(AccountsSubjects.accessChanged, { kb_ids: [req.kb_id] }),
          outboxEvent(AccountsSubjects.semanticModelsChanged, { kb_id: req.kb_id, added: req.model }),
        ],
      };
    });
    return this.vectorsets(req);
  }

  /** Removes a semantic model other than the default; content drops its vectors. */
  async removeSemanticModel(req: SemanticModelChangeRequest): Promise<KbVectorsetsDto> {
    const before = await this.vectorsets(req);
    const target = before.vectorsets.find((v) => v.id === req.model || v.vectorset === req.model);
    if (!target) throw new DomainError(ErrorCodes.NOT_FOUND, `The Knowledge Box has no semantic model ${req.model}`);
    if (target.default)
      throw new DomainError(ErrorCodes.CONFLICT, `${target.id} is the default semantic model; make another one the default first`);
    const current = await this.stored(req.kb_id);
    const models = ((current['semantic_models'] as string[] | undefined) ?? [BUILTIN_SEMANTIC_MODEL]).filter((m) => m !== target.id);
    await this.outbox.commit(this.ds, async (m) => {
      await this.kbs.update(req.kb_id, { learningConfiguration: { ...current, semantic_models: models } }, m);
      return {
        result: undefined,
        events: [
          outboxEvent(AccountsSubjects.accessChanged, { kb_ids: [req.kb_id] }),
          outboxEvent(AccountsSubjects.semanticModelsChanged, { kb_id: req.kb_id, removed_vectorset: target.vectorset }),
        ],
      };
    });
    return this.vectorsets(req);
  }

  private async stored(kbId: string): Promise<Record<string, unknown>> {
    const kb = await this.kbs.findById(kbId);
    if (!kb) throw new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');
    return kb.learningConfiguration;
  }
}

/** The name a model's vectors are stored under: what its provider calls it (`user_keys.<provider>.model`), else its id. */
function storedVectorset(id: string, keys: Record<string, Record<string, unknown> | undefined>): string {
  const info = semanticModelInfo(id);
  if (!info || !semanticModelNeedsKey(info)) return id;
  const model = keys[info.provider]?.['model'];
  return typeof model === 'string' && model ? model : id;
}
