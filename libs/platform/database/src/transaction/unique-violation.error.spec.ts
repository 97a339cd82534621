import { DomainError } from '@kb/contracts';
import { isUniqueViolation, translateUniqueViolation, uniqueViolationToDomainError } from './unique-violation.error';

const pgError = (code: string, constraint?: string) =>
  Object.assign(new Error('duplicate key value violates unique constraint'), {
    code,
    constraint,
    detail: 'Key (slug)=(secret) already exists.',
  });

describe('unique violations', () => {
  it('recognises 23505 directly and inside a driverError', () => {
    expect(isUniqueViolation(pgError('23505', 'kbs_slug_key'))).toBe(true);
    expect(isUniqueViolation({ driverError: pgError('23505') })).toBe(true);
    expect(isUniqueViolation(pgError('23503'))).toBe(false);
    expect(isUniqueViolation(pgError('23505', 'a'), 'b')).toBe(false);
    expect(isUniqueViolation('23505')).toBe(false);
  });

  it('maps to CONFLICT by default, naming the constraint but not the values', () => {
    const error = uniqueViolationToDomainError(pgError('23505', 'kbs_slug_key'));
    expect(error).toBeInstanceOf(DomainError);
    expect(error?.toJSON()).toEqual({ code: 'CONFLICT', message: 'the record already exists', details: { constraint: 'kbs_slug_key' } });
    expect(JSON.stringify(error)).not.toContain('secret');
  });

  it('translates only the named constraints', () => {
    expect(uniqueViolationToDomainError(pgError('23505', 'other'), { constraints: ['kbs_slug_key'] })).toBeUndefined();
    expect(
      uniqueViolationToDomainError(pgError('23505', 'kbs_slug_key'), { constraints: ['kbs_slug_key'], code: 'KB_SLUG_CONFLICT' })?.code,
    ).toBe('KB_SLUG_CONFLICT');
  });

  it('passes results and other errors through', async () => {
    await expect(translateUniqueViolation(async () => 7)).resolves.toBe(7);
    const other = pgError('40001');
    await expect(translateUniqueViolation(() => Promise.reject(other))).rejects.toBe(other);
  });
});
