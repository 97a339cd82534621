import { DEFAULT_SEMANTIC_MODEL, createEmbedder, type EmbeddingProviderConfig } from './create-embedder';
import { EMBEDDING_CONFIG_INVALID } from './embedder';
import { OpenAiCompatibleEmbedder } from './openai.embedder';
import { UseLiteEmbedder } from './use-lite.embedder';

describe('createEmbedder', () => {
  it('defaults to the built-in model', () => {
    expect(DEFAULT_SEMANTIC_MODEL).toBe('en-use-lite-2024');
    for (const config of [undefined, null, {}, { model: DEFAULT_SEMANTIC_MODEL, threshold: 0.5 }]) {
      const embedder = createEmbedder(config);
      expect(embedder).toBeInstanceOf(UseLiteEmbedder);
      expect(embedder.model).toBe(DEFAULT_SEMANTIC_MODEL);
    }
    expect(createEmbedder({ threshold: 0.5 }).threshold).toBe(0.5);
  });

  it('builds an OpenAI-compatible embedder from a user_keys entry', () => {
    const embedder = createEmbedder({
      url: 'https://api.openai.com/v1',
      key: 'sk-x',
      model: 'text-embedding-3-large',
      matryoshka: [256, 1024, 3072],
      size: 1024,
      similarity: 'cosine',
      threshold: 0.5,
      query_prompt: 'query: ',
    });
    expect(embedder).toBeInstanceOf(OpenAiCompatibleEmbedder);
    expect([embedder.model, embedder.dimensions, embedder.similarity, embedder.threshold]).toEqual([
      'text-embedding-3-large',
      1024,
      'COSINE',
      0.5,
    ]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'an unknown model without url',
      { model: 'multilingual-2024-05-06' },
      ['model multilingual-2024-05-06 needs a url: only en-use-lite-2024 runs built in'],
    ],
    ['a url without model', { url: 'http://tei:8080' }, ['model is required with url']],
    [
      'bad members, all at once',
      { url: 'tei', model: 'm', size: -1, similarity: 'L2', matryoshka: [0], threshold: 'high' },
      [
        'size must be a positive integer',
        'matryoshka must be an array of positive integers',
        'threshold must be a number',
        'similarity must be COSINE or DOT',
        'url must be an http(s) address',
      ],
    ],
    ['a size the built-in model lacks', { size: 768 }, ['en-use-lite-2024 has 512 dimensions']],
  ])('rejects %s', (_name, config, issues) => {
    expect(() => createEmbedder(config as EmbeddingProviderConfig)).toThrow(
      expect.objectContaining({ code: EMBEDDING_CONFIG_INVALID, details: { issues: expect.arrayContaining(issues) } }),
    );
  });
});
