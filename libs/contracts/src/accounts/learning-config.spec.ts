import { learningConfigurationIssues } from './learning-config';

describe('learningConfigurationIssues: transcription settings in user_keys', () => {
  const issues = (user_keys: Record<string, unknown>) => learningConfigurationIssues({ user_keys }, ['body'], 'update').map((i) => ({ loc: i.loc.join('.'), msg: i.msg }));

  it.each([
    ['an OpenAI-compatible server with its address', { openai_compatible: { url: 'http://speech.local/v1', transcription_model: 'whisper-large-v3' } }],
    ['OpenAI (its own address)', { openai: { key: 'sk-1', transcription_model: 'whisper-1' } }],
    ['no transcription at all', { anthropic: { key: 'sk-ant' } }],
  ])('accepts %s', (_what, keys) => {
    expect(issues(keys)).toEqual([]);
  });

  it.each([
    ['an empty model name', { openai: { transcription_model: ' ' } }, 'body.user_keys.openai.transcription_model', 'transcription_model must be a model name'],
    ['a provider that does not transcribe', { anthropic: { key: 'k', transcription_model: 'whisper-1' } }, 'body.user_keys.anthropic.transcription_model', 'Transcription is served through openai_compatible or openai, not anthropic'],
    ['an OpenAI-compatible server without an address', { openai_compatible: { key: 'k', transcription_model: 'whisper-1' } }, 'body.user_keys.openai_compatible.url', 'url (the base address of /audio/transcriptions) is required with a transcription_model'],
  ])('refuses %s', (_what, keys, loc, msg) => {
    expect(issues(keys)).toEqual([{ loc, msg }]);
  });
});
