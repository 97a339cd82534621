import { DomainError } from '@kb/contracts';
import type { OutboundHttp } from '@kb/platform/net';
import { AnthropicGenerator } from './anthropic.generator';
import { EXTRACTIVE_MODEL, ExtractiveGenerator } from './extractive.generator';
import { GENERATIVE_CONFIG_INVALID, type Generator } from './generator';
import { OpenAiCompatibleGenerator } from './openai-compatible.generator';

/** The generative part of a KB's learning configuration (spec 4.6), or of an /ask request. */
export interface GenerativeModelConfig {
  generative_model?: string | null;
  /** Provider id → that provider's settings; entries for other providers (embeddings…) are ignored. */
  user_keys?: Record<string, Record<string, unknown>> | null;
}

export interface CreateGeneratorOptions {
  /** Used when the provider entry has no `timeout_ms` (default 60 s). */
  defaultTimeoutMs?: number;
  /** The guarded outbound client (default: the process's, whose policy main.ts sets). */
  http?: OutboundHttp;
}

export const OPENAI_URL = 'https://api.openai.com/v1';
export const AZURE_OPENAI_API_VERSION = '2024-10-21';

/** Names that pick a provider without naming a model: the entry must then name the model. */
const PROVIDER_ALIASES = new Set(['openai', 'openai_compat', 'openai_compatible', 'azure_openai', 'azure', 'anthropic']);

/**
 * Builds the generator a configuration names. No model, or `extractive`, gives the built-in
 * extractive generator. `anthropic` or a `claude-*` model needs `user_keys.anthropic` (key; url,
 * model optional). Any other model is served over the OpenAI protocol by the first entry among
 * `user_keys.openai_compat`, `openai_compatible`, `openai` (url defaults to OpenAI's) and
 * `azure_openai` (key sent as `api-key`; `deployment` and `api_version` build the Azure address);
 * `azure*` model names look at `azure_openai` first. The entry's `model` (or Azure `deployment`)
 * wins over the model name. The configuration comes from users: every problem is reported at once.
 */
export function createGenerator(config?: GenerativeModelConfig | null, options: CreateGeneratorOptions = {}): Generator {
  const issues: string[] = [];
  const modelName = typeof config?.generative_model === 'string' ? config.generative_model.trim() : '';
  if (config?.generative_model != null && typeof config.generative_model !== 'string') issues.push('generative_model must be a string');
  const keys = config?.user_keys ?? {};
  if (typeof keys !== 'object' || Array.isArray(keys)) issues.push('user_keys must be an object');
  if (!modelName || modelName === EXTRACTIVE_MODEL) {
    if (issues.length) throw invalid(issues);
    return new ExtractiveGenerator();
  }

  const anthropic = modelName === 'anthropic' || /^claude/i.test(modelName);
  const candidates = anthropic
    ? ['anthropic']
    : /azure/i.test(modelName)
      ? ['azure_openai', 'azure', 'openai_compat', 'openai_compatible']
      : ['openai_compat', 'openai_compatible', 'openai', 'azure_openai'];
  const entryName = candidates.find((name) => isObject(keys) && keys[name] !== undefined && keys[name] !== null);
  if (!entryName) {
    issues.push(
      `generative_model ${modelName} needs a provider entry in user_keys (${candidates.join(' or ')}), or use ${EXTRACTIVE_MODEL}`,
    );
    throw invalid(issues);
  }
  const entry = (keys as Record<string, unknown>)[entryName];
  if (!isObject(entry)) throw invalid([...issues, `user_keys.${entryName} must be an object`]);
  const e = readEntry(entry, `user_keys.${entryName}`, issues);
  const azure = entryName === 'azure_openai' || entryName === 'azure';
  const model = e.model ?? e.deployment ?? (PROVIDER_ALIASES.has(modelName) ? undefined : modelName);
  if (!model) issues.push(`user_keys.${entryName}.model is required when generative_model is ${modelName}`);
  const url = e.url ?? (entryName === 'openai' ? OPENAI_URL : undefined);
  if (!url && !anthropic) issues.push(`user_keys.${entryName}.url is required`);
  if (anthropic && !e.key) issues.push(`user_keys.${entryName}.key is required`);
  if (azure && !e.key) issues.push(`user_keys.${entryName}.key is required`);
  if (issues.length) throw invalid(issues);

  const timeoutMs = e.timeout_ms ?? options.defaultTimeoutMs ?? 60_000;
  const g = e.generation_config;
  if (anthropic) {
    return new AnthropicGenerator({
      url,
      key: e.key as string,
      model: model as string,
      timeoutMs,
      http: options.http,
      version: e.version,
      headers: e.headers,
      temperature: g.temperature,
      defaultMaxTokens: g.default_max_completion_tokens,
      maxInputTokens: g.max_input_tokens,
    });
  }
  return new OpenAiCompatibleGenerator({
    url:
      azure && e.deployment
        ? `${(url as string).replace(/\/+$/, '')}/openai/deployments/${encodeURIComponent(e.deployment)}`
        : (url as string),
    key: e.key,
    model: model as string,
    timeoutMs,
    http: options.http,
    headers: e.headers,
    auth: e.auth ?? (azure ? 'api-key' : 'bearer'),
    apiVersion: e.api_version ?? (azure ? AZURE_OPENAI_API_VERSION : undefined),
    temperature: g.temperature,
    defaultMaxTokens: g.default_max_completion_tokens,
    maxCompletionTokens: g.max_supported_completion_tokens,
    maxInputTokens: g.max_input_tokens,
    stream: e.model_features.streaming,
    systemMessage: e.model_features.system_message,
    includeUsage: e.include_usage,
  });
}

interface ProviderEntry {
  url?: string;
  key?: string;
  model?: string;
  deployment?: string;
  api_version?: string;
  version?: string;
  auth?: 'bearer' | 'api-key';
  timeout_ms?: number;
  include_usage?: boolean;
  headers?: Record<string, string>;
  generation_config: {
    temperature?: number;
    default_max_completion_tokens?: number;
    max_input_tokens?: number;
    max_supported_completion_tokens?: number;
  };
  model_features: { streaming?: boolean; system_message?: boolean };
}

/** Reads the members this module uses, reporting each one of the wrong type; other members are ignored. */
function readEntry(raw: Record<string, unknown>, path: string, issues: string[]): ProviderEntry {
  const str = (name: string): string | undefined => {
    const v = raw[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || !v.trim()) {
      issues.push(`${path}.${name} must be a non-empty string`);
      return undefined;
    }
    return v.trim();
  };
  const positiveInt = (obj: Record<string, unknown>, name: string, at: string): number | undefined => {
    const v = obj[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      issues.push(`${at}.${name} must be a positive integer`);
      return undefined;
    }
    return v;
  };
  const bool = (obj: Record<string, unknown>, name: string, at: string): boolean | undefined => {
    const v = obj[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') issues.push(`${at}.${name} must be a boolean`);
    return typeof v === 'boolean' ? v : undefined;
  };
  const section = (name: string): Record<string, unknown> => {
    const v = raw[name];
    if (v === undefined || v === null) return {};
    if (!isObject(v)) issues.push(`${path}.${name} must be an object`);
    return isObject(v) ? v : {};
  };

  const url = str('url');
  if (url && !/^https?:\/\/[^/\s]+/.test(url)) issues.push(`${path}.url must be an http(s) address`);
  const auth = str('auth');
  if (auth && auth !== 'bearer' && auth !== 'api-key') issues.push(`${path}.auth must be bearer or api-key`);
  const headers = section('headers');
  for (const [name, value] of Object.entries(headers))
    if (typeof value !== 'string') issues.push(`${path}.headers.${name} must be a string`);
  const gc = section('generation_config');
  const temperature = gc['temperature'];
  if (temperature !== undefined && temperature !== null && !(typeof temperature === 'number' && temperature >= 0 && temperature <= 2)) {
    issues.push(`${path}.generation_config.temperature must be a number from 0 to 2`);
  }
  const features = section('model_features');
  return {
    url,
    key: str('key'),
    model: str('model'),
    deployment: str('deployment'),
    api_version: str('api_version'),
    version: str('version'),
    auth: auth as ProviderEntry['auth'],
    timeout_ms: positiveInt(raw, 'timeout_ms', path),
    include_usage: bool(raw, 'include_usage', path),
    headers: Object.keys(headers).length ? (headers as Record<string, string>) : undefined,
    generation_config: {
      temperature: typeof temperature === 'number' ? temperature : undefined,
      default_max_completion_tokens: positiveInt(gc, 'default_max_completion_tokens', `${path}.generation_config`),
      max_input_tokens: positiveInt(gc, 'max_input_tokens', `${path}.generation_config`),
      max_supported_completion_tokens: positiveInt(gc, 'max_supported_completion_tokens', `${path}.generation_config`),
    },
    model_features: {
      streaming: bool(features, 'streaming', `${path}.model_features`),
      system_message: bool(features, 'system_message', `${path}.model_features`),
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(issues: string[]): DomainError {
  return new DomainError(GENERATIVE_CONFIG_INVALID, `invalid generative model configuration: ${issues.join('; ')}`, { issues });
}
