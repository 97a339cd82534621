import { learningConfigurationIssues, semanticModelInfo } from './learning-config';

describe('learningConfigurationIssues: transcription settings in user_keys', () => {
  const issues = (user_keys: Record<string, unknown>) =>
    learningConfigurationIssues({ user_keys }, ['body'], 'update').map((i) => ({ loc: i.loc.join('.'), msg: i.msg }));

  it.each([
    [
      'an OpenAI-compatible server with its address',
      { openai_compatible: { url: 'http://speech.local/v1', transcription_model: 'whisper-large-v3' } },
    ],
    ['OpenAI (its own address)', { openai: { key: 'sk-1', transcription_model: 'whisper-1' } }],
    ['no transcription at all', { anthropic: { key: 'sk-ant' } }],
  ])('accepts %s', (_what, keys) => {
    expect(issues(keys)).toEqual([]);
  });

  it.each([
    [
      'an empty model name',
      { openai: { transcription_model: ' ' } },
      'body.user_keys.openai.transcription_model',
      'transcription_model must be a model name',
    ],
    [
      'a provider that does not transcribe',
      { anthropic: { key: 'k', transcription_model: 'whisper-1' } },
      'body.user_keys.anthropic.transcription_model',
      'Transcription is served through openai_compatible or openai, not anthropic',
    ],
    [
      'an OpenAI-compatible server without an address',
      { openai_compatible: { key: 'k', transcription_model: 'whisper-1' } },
      'body.user_keys.openai_compatible.url',
      'url (the base address of /audio/transcriptions) is required with a transcription_model',
    ],
  ])('refuses %s', (_what, keys, loc, msg) => {
    expect(issues(keys)).toEqual([{ loc, msg }]);
  });
});

describe('semantic models run from local model folders', () => {
  const issues = (semantic_models: unknown[], user_keys?: Record<string, unknown>) =>
    learningConfigurationIssues({ semantic_models, ...(user_keys ? { user_keys } : {}) }, ['body'], 'create').map((i) => ({
      loc: i.loc.join('.'),
      msg: i.msg,
    }));

  it('accepts the named local models and local:<folder> ids without user_keys', () => {
    expect(
      issues([
        'multilingual-e5-small',
        'bge-small-en-v1.5',
        'all-MiniLM-L6-v2',
        'local:gte-small',
        'local:my_model.v2',
        'local:' + 'x'.repeat(94),
      ]),
    ).toEqual([]);
    expect(semanticModelInfo('multilingual-e5-small')).toMatchObject({ provider: 'local', size: 384, similarity: 'COSINE' });
    expect(semanticModelInfo('local:gte-small')).toMatchObject({ provider: 'local', size: 0 });
  });

  it.each([['local:'], ['local:../etc'], ['local:a/b'], ['local:-x'], ['local:' + 'x'.repeat(95)], ['toString'], [42]])(
    'refuses %p',
    (id) => {
      expect(issues([id])).toEqual([{ loc: 'body.semantic_models.0', msg: expect.stringContaining('Unknown semantic model') }]);
      expect(semanticModelInfo(id)).toBeUndefined();
    },
  );

  it('still asks provider models for their keys', () => {
    expect(issues(['text-embedding-3-small'])).toEqual([
      { loc: 'body.semantic_models.0', msg: 'text-embedding-3-small needs user_keys.openai' },
    ]);
  });
});
