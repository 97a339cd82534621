import { OutboundHttp } from '@kb/platform/net';
import { DomainError } from '@kb/contracts';
import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { AnthropicGenerator } from './anthropic.generator';
import { createGenerator, type GenerativeModelConfig } from './create-generator';
import { ExtractiveGenerator } from './extractive.generator';
import { GENERATIVE_CONFIG_INVALID, collectAnswer, type GenerationRequest } from './generator';
import { OpenAiCompatibleGenerator } from './openai-compatible.generator';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

const request: GenerationRequest = {
  question: 'Who wrote Dune?',
  context: [{ key: 'k', text: 'Dune was written by Frank Herbert.' }],
  chatHistory: [],
  citations: 'none',
  maxAnswerTokens: 5_000,
};

function issuesOf(config: unknown): string[] {
  try {
    createGenerator(config as GenerativeModelConfig);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe(GENERATIVE_CONFIG_INVALID);
    return (err as DomainError).details?.['issues'] as string[];
  }
  throw new Error('the configuration was accepted');
}

describe('createGenerator', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => (llm = await startFakeLlmServer()));
  afterAll(() => llm.close());
  beforeEach(() => llm.reset());

  it.each([undefined, null, {}, { generative_model: 'extractive' }, { generative_model: '  ', user_keys: { openai: { key: 'sk' } } }])(
    'builds the extractive generator for %j',
    (config) => {
      const generator = createGenerator(config as GenerativeModelConfig);
      expect(generator).toBeInstanceOf(ExtractiveGenerator);
      expect(generator.model).toBe('extractive');
    },
  );

  it('serves any other model over the OpenAI protocol from user_keys.openai_compat', async () => {
    const generator = createGenerator(
      {
        generative_model: 'llama3.1:8b',
        user_keys: {
          openai_compat: {
            url: llm.openAiUrl,
            key: 'local',
            generation_config: { temperature: 0.1, max_supported_completion_tokens: 256, max_input_tokens: 8_000 },
          },
          my_embedder: { url: 'not even a url' },
        },
      },
      { http: local },
    );
    expect(generator).toBeInstanceOf(OpenAiCompatibleGenerator);
    expect(generator.model).toBe('llama3.1:8b');
    await collectAnswer(generator.generate(request));
    expect(llm.requests[0]?.body).toMatchObject({ model: 'llama3.1:8b', temperature: 0.1, max_tokens: 256 });
    expect(llm.requests[0]?.headers['authorization']).toBe('Bearer local');
  });

  it("lets the entry's model win over a provider alias and builds Azure addresses", async () => {
    const azure = createGenerator(
      { generative_model: 'azure_openai', user_keys: { azure_openai: { url: llm.url, key: 'az', deployment: 'gpt4o' } } },
      { http: local },
    );
    expect(azure.model).toBe('gpt4o');
    await collectAnswer(azure.generate(request));
    expect(llm.requests[0]?.path).toBe('/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21');
    expect(llm.requests[0]?.headers['api-key']).toBe('az');
    expect(createGenerator({ generative_model: 'openai', user_keys: { openai: { key: 'sk', model: 'gpt-4o-mini' } } }).model).toBe(
      'gpt-4o-mini',
    );
  });

  it('builds Anthropic for anthropic and claude-* models', async () => {
    const claude = createGenerator(
      { generative_model: 'claude-3-5-haiku-latest', user_keys: { anthropic: { key: 'sk-ant', url: llm.url } } },
      { http: local },
    );
    expect(claude).toBeInstanceOf(AnthropicGenerator);
    expect(claude.model).toBe('claude-3-5-haiku-latest');
    await collectAnswer(claude.generate(request));
    expect(llm.requests[0]?.path).toBe('/v1/messages');
    expect(llm.requests[0]?.headers['x-api-key']).toBe('sk-ant');
    expect(
      createGenerator({ generative_model: 'anthropic', user_keys: { anthropic: { key: 'k', model: 'claude-sonnet-4-0' } } }).model,
    ).toBe('claude-sonnet-4-0');
  });

  it('reports every problem of a configuration at once', () => {
    expect(
      issuesOf({
        generative_model: 'my-model',
        user_keys: {
          openai_compat: {
            url: 'ftp://x',
            key: 5,
            timeout_ms: -1,
            headers: { a: 1 },
            generation_config: { temperature: 9, max_input_tokens: 1.5 },
            model_features: { streaming: 'yes' },
          },
        },
      }),
    ).toEqual([
      'user_keys.openai_compat.url must be an http(s) address',
      'user_keys.openai_compat.headers.a must be a string',
      'user_keys.openai_compat.generation_config.temperature must be a number from 0 to 2',
      'user_keys.openai_compat.key must be a non-empty string',
      'user_keys.openai_compat.timeout_ms must be a positive integer',
      'user_keys.openai_compat.generation_config.max_input_tokens must be a positive integer',
      'user_keys.openai_compat.model_features.streaming must be a boolean',
    ]);
  });

  it.each([
    [
      { generative_model: 'gpt-4o' },
      [
        'generative_model gpt-4o needs a provider entry in user_keys (openai_compat or openai_compatible or openai or azure_openai), or use extractive',
      ],
    ],
    [{ generative_model: 'claude-3-opus', user_keys: { anthropic: {} } }, ['user_keys.anthropic.key is required']],
    [
      { generative_model: 'anthropic', user_keys: { anthropic: { key: 'k' } } },
      ['user_keys.anthropic.model is required when generative_model is anthropic'],
    ],
    [
      { generative_model: 'openai_compat', user_keys: { openai_compat: { key: 'k' } } },
      ['user_keys.openai_compat.model is required when generative_model is openai_compat', 'user_keys.openai_compat.url is required'],
    ],
    [{ generative_model: 'gpt-4o', user_keys: { openai: 'sk' } }, ['user_keys.openai must be an object']],
    [{ generative_model: 42 }, ['generative_model must be a string']],
  ])('rejects %j', (config, issues) => {
    expect(issuesOf(config)).toEqual(issues);
  });
});
