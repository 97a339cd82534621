import { ConfigError, EnvReader } from './env';

describe('EnvReader', () => {
  it('reads typed values with fallbacks', () => {
    const env = new EnvReader({ PORT: '9000', DEBUG: 'true', MODE: 'nats', LIST: 'a, b,,c' });
    expect(env.int('PORT', 8080)).toBe(9000);
    expect(env.int('MISSING', 8080)).toBe(8080);
    expect(env.bool('DEBUG', false)).toBe(true);
    expect(env.oneOf('MODE', ['nats', 'inprocess'] as const, 'inprocess')).toBe('nats');
    expect(env.list('LIST')).toEqual(['a', 'b', 'c']);
    expect(() => env.done()).not.toThrow();
  });

  it('reports every problem at once', () => {
    const env = new EnvReader({ PORT: 'x', DEBUG: 'maybe', MODE: 'smoke', URL: 'not a url' });
    env.int('PORT', 1);
    env.bool('DEBUG', false);
    env.oneOf('MODE', ['a', 'b'] as const, 'a');
    env.string('REQUIRED');
    env.url('URL');
    try {
      env.done();
      throw new Error('expected ConfigError');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toHaveLength(5);
    }
  });
});
