import { DomainError, ErrorCodes } from '@kb/contracts';
import { IsInt, IsString } from 'class-validator';
import { silentLogger, type BusLogger } from './bus-logger';
import { decodeEnvelope, errorEnvelope, InvalidPayloadError, jsonRoundTrip, successEnvelope, toJson, validateIncoming } from './envelope';

class Sample {
  @IsString() name!: string;
  @IsInt() count!: number;
}

describe('envelope', () => {
  it('round-trips data through JSON like the wire does', () => {
    const at = new Date('2024-01-02T03:04:05.000Z');
    const text = toJson(successEnvelope({ at, n: 1 }));
    expect(decodeEnvelope(text)).toEqual({ at: '2024-01-02T03:04:05.000Z', n: 1 });
    expect(jsonRoundTrip(undefined)).toBeNull();
  });

  it('keeps a DomainError as is', () => {
    const envelope = errorEnvelope(new DomainError('KB_NOT_FOUND', 'no kb', { kbid: 'x' }), silentLogger, {});
    expect(envelope).toEqual({ ok: false, error: { code: 'KB_NOT_FOUND', message: 'no kb', details: { kbid: 'x' } } });
    expect(() => decodeEnvelope(toJson(envelope))).toThrow(expect.objectContaining({ code: 'KB_NOT_FOUND', details: { kbid: 'x' } }));
  });

  it('hides an unexpected error behind INTERNAL and logs it with the same error id', () => {
    const logged: Record<string, unknown>[] = [];
    const logger: BusLogger = { ...silentLogger, error: (_msg, fields) => logged.push(fields ?? {}) };
    const envelope = errorEnvelope(new TypeError('secret detail'), logger, { subject: 's' });
    if (envelope.ok) throw new Error('expected an error envelope');
    expect(envelope.error.code).toBe(ErrorCodes.INTERNAL);
    expect(envelope.error.message).toBe('Internal error');
    expect(logged[0]?.error_id).toBe(envelope.error.details?.error_id);
    expect(JSON.stringify(envelope)).not.toContain('secret detail');
  });

  it('rejects malformed replies as INTERNAL', () => {
    expect(() => decodeEnvelope('not json')).toThrow(expect.objectContaining({ code: ErrorCodes.INTERNAL }));
    expect(() => decodeEnvelope('{"x":1}')).toThrow(expect.objectContaining({ code: ErrorCodes.INTERNAL }));
  });

  it('validates against the class and reports every invalid member', () => {
    expect(validateIncoming(Sample, { name: 'a', count: 2 })).toBeInstanceOf(Sample);
    let caught: unknown;
    try {
      validateIncoming(Sample, { name: 1, count: 'x' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidPayloadError);
    const detail = (caught as InvalidPayloadError).domainError.details?.detail as { loc: string[] }[];
    expect(detail.map((d) => d.loc.join('.')).sort()).toEqual(['count', 'name']);
  });

  it('answers a PostgreSQL data exception (SQLSTATE class 22) as a validation error, anything else as INTERNAL', () => {
    const invalidUuid = Object.assign(new Error('invalid input syntax for type uuid: "undefined"'), { code: '22P02' });
    const wrapped = Object.assign(new Error('QueryFailedError'), { driverError: { code: '22021' } });
    for (const err of [invalidUuid, wrapped])
      expect(errorEnvelope(err, silentLogger, {})).toMatchObject({ ok: false, error: { code: ErrorCodes.VALIDATION_FAILED } });
    expect(errorEnvelope(Object.assign(new Error('deadlock'), { code: '40P01' }), silentLogger, {})).toMatchObject({
      ok: false,
      error: { code: ErrorCodes.INTERNAL },
    });
  });
});
