import { databaseUrlFromEnv, pgliteServerEnv, serviceDatabaseUrlVariable } from './database-url.config';

describe('databaseUrlFromEnv', () => {
  const content = 'postgres://kb@db.internal:5432/content';
  const shared = 'postgresql://kb@db.internal:5432/kb';

  it.each([
    ['the service variable first', { CONTENT_DATABASE_URL: content, DATABASE_URL: shared }, content],
    ['DATABASE_URL as the fallback', { DATABASE_URL: shared }, shared],
    ['undefined (embedded) when neither is set', {}, undefined],
    ['undefined when both are blank', { CONTENT_DATABASE_URL: '  ', DATABASE_URL: '' }, undefined],
    ['a blank service variable skipped', { CONTENT_DATABASE_URL: ' ', DATABASE_URL: shared }, shared],
    ['surrounding spaces trimmed', { CONTENT_DATABASE_URL: ` ${content} ` }, content],
  ])('returns %s', (_label, env, expected) => {
    expect(databaseUrlFromEnv(env, 'content')).toBe(expected);
  });

  it('ignores other services', () => {
    expect(databaseUrlFromEnv({ ACCOUNTS_DATABASE_URL: content }, 'content')).toBeUndefined();
  });

  it.each([
    ['not a url', /not a valid URL/],
    ['mysql://db/kb', /must start with postgres/],
  ])('rejects %s', (value, message) => {
    expect(() => databaseUrlFromEnv({ CONTENT_DATABASE_URL: value }, 'content')).toThrow(message);
  });

  it('names the variable after the service', () => {
    expect(serviceDatabaseUrlVariable('content')).toBe('CONTENT_DATABASE_URL');
    expect(serviceDatabaseUrlVariable('read-model')).toBe('READ_MODEL_DATABASE_URL');
    expect(() => serviceDatabaseUrlVariable('--')).toThrow(/invalid service name/);
  });
});

describe('pgliteServerEnv', () => {
  it('defaults to ./data/pg on a free local port', () => {
    expect(pgliteServerEnv({})).toEqual({ dataDir: './data/pg', host: '127.0.0.1', port: 0 });
  });

  it('reads every variable', () => {
    expect(
      pgliteServerEnv({ PGLITE_DATA_DIR: '/var/kb/pg', PGLITE_HOST: '0.0.0.0', PGLITE_PORT: '6543', PGLITE_MAX_CONNECTIONS: '32' }),
    ).toEqual({ dataDir: '/var/kb/pg', host: '0.0.0.0', port: 6543, maxConnections: 32 });
  });

  it.each(['-1', '65536', 'abc', '12.5'])('rejects PGLITE_PORT=%s', (port) => {
    expect(() => pgliteServerEnv({ PGLITE_PORT: port })).toThrow(/PGLITE_PORT/);
  });

  it('rejects PGLITE_MAX_CONNECTIONS=0', () => {
    expect(() => pgliteServerEnv({ PGLITE_MAX_CONNECTIONS: '0' })).toThrow(/PGLITE_MAX_CONNECTIONS/);
  });
});
