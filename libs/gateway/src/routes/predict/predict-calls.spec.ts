import { DomainError, ErrorCodes } from '@kb/contracts';
import { base64Floats } from './predict-compat.controller';
import { generationFailure, unknownEndpoint } from './predict-calls';

describe('predict helpers', () => {
  it('encodes vectors as OpenAI does with encoding_format base64 (little-endian float32)', () => {
    const encoded = base64Floats([1, -0.5, 0.25]);
    const buf = Buffer.from(encoded, 'base64');
    expect(buf.length).toBe(12);
    expect([buf.readFloatLE(0), buf.readFloatLE(4), buf.readFloatLE(8)]).toEqual([1, -0.5, 0.25]);
  });

  it.each([
    ['rate_limited', ErrorCodes.RATE_LIMITED],
    ['timeout', ErrorCodes.BUS_TIMEOUT],
    ['provider', ErrorCodes.SERVICE_UNAVAILABLE],
    ['auth', ErrorCodes.SERVICE_UNAVAILABLE],
  ])("maps a %s generation failure to %s, keeping the generator's message", (kind, code) => {
    const mapped = generationFailure(new DomainError('GENERATION_FAILED', 'openai answered 500', { kind })) as DomainError;
    expect(mapped.code).toBe(code);
    expect(mapped.message).toContain('openai answered 500');
  });

  it("maps an unusable configuration to a 422 on the KB's generative model, and leaves other errors alone", () => {
    const mapped = generationFailure(new DomainError('GENERATIVE_CONFIG_INVALID', 'needs user_keys')) as DomainError;
    expect(mapped.code).toBe(ErrorCodes.VALIDATION_FAILED);
    const other = new Error('x');
    expect(generationFailure(other)).toBe(other);
  });

  it('names the endpoints a method serves when the path names another', () => {
    expect(unknownEndpoint('GET', 'chat').details?.['detail']).toEqual([
      { loc: ['path', 'endpoint'], msg: expect.stringContaining("'sentence', 'tokens', 'query'"), type: 'enum' },
    ]);
  });
});
