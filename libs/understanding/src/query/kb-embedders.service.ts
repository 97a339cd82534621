import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AccountsSubjects, BUILTIN_SEMANTIC_MODEL, LOCAL_SEMANTIC_PROVIDER, semanticModelInfo } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { createEmbedder, type EmbeddingProviderConfig } from '../pipeline/analysis/create-embedder';
import type { Embedder } from '../pipeline/analysis/embedder';
import { defaultEmbedderFactory } from '../pipeline/analysis/default-embedder';
import { localEmbedder, closeLocalEmbedders } from '../pipeline/analysis/local-embedders';

const TTL_MS = 60_000;
const OPENAI_URL = 'https://api.openai.com/v1';

/**
 * The embedder of each knowledge box, from its model configuration (spec 4.6): the built-in model
 * unless the KB's default semantic model is a provider model, which is then called with the
 * credentials and address of `user_keys[<provider>]`. Processing and queries share it, so
 * paragraphs and queries always land in the same vectorset. Configurations are re-read after a
 * minute (credentials can be rotated; the semantic model of a KB cannot change).
 */
@Injectable()
export class KbEmbeddersService implements OnModuleInit, OnModuleDestroy {
  /** Per KB: its semantic model ids and their embedders, in the same order (the default first). */
  private readonly cache = new Map<string, { models: Promise<KbModels>; until: number }>();

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
  ) {}

  /** A KB whose semantic models change is resolved again at once (every instance hears it). */
  async onModuleInit(): Promise<void> {
    await this.bus.subscribe(AccountsSubjects.semanticModelsChanged, async (event) => void this.cache.delete(event.kb_id));
  }

  /** The embedder of the KB's default semantic model. */
  async get(kbid: string): Promise<Embedder> {
    if (this.options.embedderFactory) return this.options.embedderFactory(kbid);
    return (await this.all(kbid))[0] as Embedder;
  }

  /**
   * One embedder per semantic model of the KB (spec 4.6 `semantic_models`), the default first:
   * processing vectorises every paragraph with each, so /find can search any of them by `vectorset`.
   */
  async all(kbid: string): Promise<Embedder[]> {
    if (this.options.embedderFactory) return [await this.options.embedderFactory(kbid)];
    return (await this.models(kbid)).embedders;
  }

  /** The embedder whose vectors a query names by `vectorset` (its model id, or the model the provider reports). */
  async forVectorset(kbid: string, vectorset: string | undefined): Promise<Embedder | undefined> {
    if (this.options.embedderFactory) {
      const only = await this.options.embedderFactory(kbid);
      return !vectorset || only.model === vectorset ? only : undefined;
    }
    const { ids, embedders } = await this.models(kbid);
    if (!vectorset) return embedders[0];
    return embedders.find((e) => e.model === vectorset) ?? embedders[ids.indexOf(vectorset)];
  }

  private models(kbid: string): Promise<KbModels> {
    const hit = this.cache.get(kbid);
    if (hit && hit.until > Date.now()) return hit.models;
    const models = this.resolve(kbid);
    this.cache.set(kbid, { models, until: Date.now() + TTL_MS });
    models.catch(() => this.cache.delete(kbid));
    return models;
  }

  private async resolve(kbid: string): Promise<KbModels> {
    const config = await this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbid });
    const keys = (config['user_keys'] ?? {}) as Record<string, Record<string, unknown>>;
    const ids = modelsOf(config);
    return { ids, embedders: await Promise.all(ids.map((model) => this.embedderOf(kbid, model, keys))) };
  }

  private async embedderOf(kbid: string, model: string, keys: Record<string, Record<string, unknown>>): Promise<Embedder> {
    const info = semanticModelInfo(model);
    if (!info || info.provider === 'builtin') return defaultEmbedderFactory(kbid);
    if (info.provider === LOCAL_SEMANTIC_PROVIDER) return localEmbedder(this.options.embeddingModelDir, model, info);
    const entry = keys[info.provider] ?? {};
    const str = (k: string) => (typeof entry[k] === 'string' ? (entry[k] as string) : undefined);
    const num = (k: string) => (typeof entry[k] === 'number' ? (entry[k] as number) : undefined);
    const c: EmbeddingProviderConfig = {
      url: str('url') ?? (info.provider === 'openai' ? OPENAI_URL : undefined),
      key: str('key') ?? str('api_key'),
      model: str('model') ?? model,
      size: num('size') ?? (info.size || undefined),
      similarity: str('similarity') ?? info.similarity,
      threshold: num('threshold') ?? info.threshold,
      passage_prompt: str('passage_prompt'),
      query_prompt: str('query_prompt'),
      timeout_ms: num('timeout_ms'),
      max_batch: num('max_batch'),
    };
    if (info.matryoshka_dims.length) c.matryoshka = info.matryoshka_dims;
    return createEmbedder(c);
  }

  async onModuleDestroy(): Promise<void> {
    const all = [...this.cache.values()];
    this.cache.clear();
    for (const { models } of all) {
      for (const e of await models.then(
        (m) => m.embedders,
        () => [] as Embedder[],
      )) {
        // The built-in and local models are shared by every KB and closed below or with the process.
        if (e.model !== BUILTIN_SEMANTIC_MODEL && semanticModelInfo(e.model)?.provider !== LOCAL_SEMANTIC_PROVIDER)
          await e.close().catch(() => undefined);
      }
    }
    await closeLocalEmbedders();
  }
}

interface KbModels {
  ids: string[];
  embedders: Embedder[];
}

/** The KB's semantic models, the default first (the built-in model when none is configured). */
function modelsOf(config: Record<string, unknown>): string[] {
  const list = Array.isArray(config['semantic_models'])
    ? (config['semantic_models'] as unknown[]).filter((m): m is string => typeof m === 'string')
    : [];
  const dflt =
    typeof config['default_semantic_model'] === 'string' ? config['default_semantic_model'] : (list[0] ?? BUILTIN_SEMANTIC_MODEL);
  return [...new Set([dflt, ...list])];
}
