import type { ValidationIssue } from '../common/errors';

/**
 * The models a Knowledge Box can be configured with (spec 4.6). Built-in models work offline;
 * provider models need credentials in `user_keys[<provider>]`.
 */
export interface SemanticModelInfo {
  provider: string;
  size: number;
  similarity: 'DOT' | 'COSINE';
  threshold: number;
  matryoshka_dims: number[];
}

export const BUILTIN_SEMANTIC_MODEL = 'en-use-lite-2024';
/**
 * Models whose provider is `local` run on the processing workers from a model folder the operator
 * provides (`EMBEDDING_MODEL_DIR/<model id>`, ONNX), with no user_keys; besides the named ones,
 * any `local:<folder>` id names a folder of that name.
 */
export const LOCAL_SEMANTIC_PROVIDER = 'local';
export const SEMANTIC_MODELS: Record<string, SemanticModelInfo> = {
  [BUILTIN_SEMANTIC_MODEL]: { provider: 'builtin', size: 512, similarity: 'DOT', threshold: 0.35, matryoshka_dims: [] },
  'multilingual-e5-small': { provider: LOCAL_SEMANTIC_PROVIDER, size: 384, similarity: 'COSINE', threshold: 0.78, matryoshka_dims: [] },
  'bge-small-en-v1.5': { provider: LOCAL_SEMANTIC_PROVIDER, size: 384, similarity: 'COSINE', threshold: 0.5, matryoshka_dims: [] },
  'all-MiniLM-L6-v2': { provider: LOCAL_SEMANTIC_PROVIDER, size: 384, similarity: 'COSINE', threshold: 0.3, matryoshka_dims: [] },
  'text-embedding-3-small': {
    provider: 'openai',
    size: 1536,
    similarity: 'COSINE',
    threshold: 0.5,
    matryoshka_dims: [1536, 1024, 512, 256],
  },
  'text-embedding-3-large': {
    provider: 'openai',
    size: 3072,
    similarity: 'COSINE',
    threshold: 0.5,
    matryoshka_dims: [3072, 2048, 1024, 512, 256],
  },
  hf_embedding: { provider: 'openai_compatible', size: 0, similarity: 'COSINE', threshold: 0.5, matryoshka_dims: [] },
};

// At most 100 characters in all: the id is also the vectorset name.
const LOCAL_MODEL_ID = /^local:[A-Za-z0-9][A-Za-z0-9._-]{0,93}$/;

/** A semantic model's catalogue entry; `local:<folder>` ids get the generic local one (size learnt from the folder). */
export function semanticModelInfo(id: unknown): SemanticModelInfo | undefined {
  if (typeof id !== 'string') return undefined;
  if (Object.prototype.hasOwnProperty.call(SEMANTIC_MODELS, id)) return SEMANTIC_MODELS[id];
  if (LOCAL_MODEL_ID.test(id))
    return { provider: LOCAL_SEMANTIC_PROVIDER, size: 0, similarity: 'COSINE', threshold: 0.5, matryoshka_dims: [] };
  return undefined;
}

/** Providers whose models need no `user_keys` entry. */
export function semanticModelNeedsKey(info: SemanticModelInfo): boolean {
  return info.provider !== 'builtin' && info.provider !== LOCAL_SEMANTIC_PROVIDER;
}

export const BUILTIN_GENERATIVE_MODEL = 'extractive';
/** Generative model → the `user_keys` provider it needs (null: none). */
export const GENERATIVE_MODELS: Record<string, string | null> = {
  [BUILTIN_GENERATIVE_MODEL]: null,
  'chatgpt-azure-4o': 'azure_openai',
  'chatgpt-4o': 'openai',
  'chatgpt-4o-mini': 'openai',
  'claude-3-5-sonnet': 'anthropic',
  'claude-3-5-haiku': 'anthropic',
  'generative-multilingual-openai-compatible': 'openai_compatible',
};

export const SIMPLE_OPTIONS = {
  ner_model: ['multilingual'],
  anonymization_model: ['disabled'],
  visual_labeling: ['disabled'],
  relation_model: ['base'],
  summary: ['simple', 'extended'],
} as const;

export const LEARNING_DEFAULTS = {
  semantic_models: [BUILTIN_SEMANTIC_MODEL],
  generative_model: BUILTIN_GENERATIVE_MODEL,
  ner_model: 'multilingual',
  anonymization_model: 'disabled',
  visual_labeling: 'disabled',
  relation_model: 'base',
  summary: 'simple',
  summary_model: BUILTIN_GENERATIVE_MODEL,
  prefer_markdown_generative_response: false,
};

const PROVIDERS = ['openai', 'azure_openai', 'anthropic', 'openai_compatible'];

/** The providers whose `user_keys` entry may name a `transcription_model` (audio and video). */
export const TRANSCRIPTION_PROVIDERS = ['openai_compatible', 'openai'];

/**
 * A `transcription_model` is a model name, on an entry that can serve it: OpenAI's API, or an
 * OpenAI-compatible server at the entry's `url` (there is no default address for one).
 */
function transcriptionIssues(provider: string, entry: unknown, add: (path: (string | number)[], msg: string, type?: string) => void): void {
  const e = entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
  const model = e?.['transcription_model'];
  if (model === undefined) return;
  const at = ['user_keys', provider, 'transcription_model'];
  if (typeof model !== 'string' || model.trim() === '') add(at, 'transcription_model must be a model name', 'string_type');
  else if (!TRANSCRIPTION_PROVIDERS.includes(provider))
    add(at, `Transcription is served through ${TRANSCRIPTION_PROVIDERS.join(' or ')}, not ${provider}`);
  else if (provider === 'openai_compatible' && !(typeof e?.['url'] === 'string' && e['url'] !== '')) {
    add(
      ['user_keys', provider, 'url'],
      'url (the base address of /audio/transcriptions) is required with a transcription_model',
      'missing',
    );
  }
}

/**
 * Checks a learning configuration against the catalogue above; every problem is reported with its
 * location, as in a 422. `mode` 'update' refuses semantic model changes (they need reindexing).
 */
export function learningConfigurationIssues(
  config: Record<string, unknown>,
  loc: (string | number)[],
  mode: 'create' | 'update',
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (path: (string | number)[], msg: string, type = 'value_error') => issues.push({ loc: [...loc, ...path], msg, type });
  const userKeys = config['user_keys'];
  if (userKeys !== undefined && userKeys !== null) {
    if (typeof userKeys !== 'object' || Array.isArray(userKeys))
      add(['user_keys'], 'user_keys must be an object keyed by provider', 'dict_type');
    else {
      for (const p of Object.keys(userKeys))
        if (!PROVIDERS.includes(p)) add(['user_keys', p], `Unknown provider; one of ${PROVIDERS.join(', ')}`, 'enum');
      for (const [p, entry] of Object.entries(userKeys as Record<string, unknown>)) transcriptionIssues(p, entry, add);
    }
  }
  const hasKey = (provider: string) =>
    typeof userKeys === 'object' && userKeys !== null && provider in (userKeys as Record<string, unknown>);

  const semantic = [
    ...(Array.isArray(config['semantic_models']) ? (config['semantic_models'] as unknown[]) : []),
    ...(config['semantic_model'] !== undefined ? [config['semantic_model']] : []),
  ];
  if (mode === 'update' && (config['semantic_models'] !== undefined || config['semantic_model'] !== undefined)) {
    add(['semantic_models'], 'Semantic models are chosen when the Knowledge Box is created', 'value_error');
  }
  if (config['semantic_models'] !== undefined && !Array.isArray(config['semantic_models']))
    add(['semantic_models'], 'Input should be a valid list', 'list_type');
  semantic.forEach((m, i) => {
    const info = semanticModelInfo(m);
    if (!info)
      add(
        ['semantic_models', i],
        `Unknown semantic model; one of ${Object.keys(SEMANTIC_MODELS).join(', ')}, or local:<model folder>`,
        'enum',
      );
    else if (semanticModelNeedsKey(info) && !hasKey(info.provider))
      add(['semantic_models', i], `${String(m)} needs user_keys.${info.provider}`);
  });
  const dflt = config['default_semantic_model'];
  if (dflt !== undefined && dflt !== null && !semantic.includes(dflt) && !(mode === 'update' && semanticModelInfo(dflt) !== undefined)) {
    add(['default_semantic_model'], 'default_semantic_model must be one of the semantic models of the Knowledge Box');
  }
  for (const member of ['generative_model', 'summary_model'] as const) {
    const v = config[member];
    if (v === undefined || v === null) continue;
    const provider = typeof v === 'string' ? GENERATIVE_MODELS[v] : undefined;
    if (provider === undefined) add([member], `Unknown generative model; one of ${Object.keys(GENERATIVE_MODELS).join(', ')}`, 'enum');
    else if (provider !== null && !hasKey(provider)) add([member], `${String(v)} needs user_keys.${provider}`);
  }
  for (const [member, options] of Object.entries(SIMPLE_OPTIONS)) {
    const v = config[member];
    if (v !== undefined && v !== null && !(options as readonly string[]).includes(v as string))
      add([member], `One of ${options.join(', ')}`, 'enum');
  }
  for (const member of ['user_prompts', 'summary_prompt']) {
    const v = config[member];
    if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v)))
      add([member], 'Input should be a valid dictionary', 'dict_type');
  }
  const pm = config['prefer_markdown_generative_response'];
  if (pm !== undefined && typeof pm !== 'boolean')
    add(['prefer_markdown_generative_response'], 'Input should be a valid boolean', 'bool_type');
  return issues;
}
