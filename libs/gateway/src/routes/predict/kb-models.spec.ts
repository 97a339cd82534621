import { generativeProviders } from './kb-models.controller';
import { wantsNdjson } from './predict.controller';

describe('generative_providers', () => {
  it("answers the reference JS SDK's shape: providers by name, each with its models by id", () => {
    expect(generativeProviders({ builtin: ['extractive'], openai: ['chatgpt-4o-mini'] })).toEqual({
      providers: {
        builtin: {
          title: 'Built-in',
          enterprise_readiness: true,
          models: {
            extractive: {
              name: 'extractive',
              title: 'Built-in extractive answers',
              config: {},
              features: { streaming: true },
              metadata: {},
            },
          },
        },
        openai: {
          title: 'OpenAI',
          enterprise_readiness: false,
          models: {
            'chatgpt-4o-mini': {
              name: 'chatgpt-4o-mini',
              title: 'chatgpt-4o-mini',
              config: {},
              features: { streaming: true },
              metadata: {},
            },
          },
        },
      },
    });
    expect(generativeProviders({ someone: ['m'] }).providers['someone']?.title).toBe('someone');
  });
});

describe('predict/chat content negotiation', () => {
  it('streams NDJSON only when the Accept header names application/x-ndjson', () => {
    expect(wantsNdjson('application/x-ndjson')).toBe(true);
    expect(wantsNdjson('text/plain, application/x-ndjson;q=0.9')).toBe(true);
    expect(wantsNdjson(['application/json', 'Application/X-NDJSON'])).toBe(true);
    expect(wantsNdjson(undefined)).toBe(false);
    expect(wantsNdjson('*/*')).toBe(false);
    expect(wantsNdjson('application/json')).toBe(false);
    expect(wantsNdjson('application/x-ndjsonx')).toBe(false);
  });
});
