import { DomainError, ErrorCodes } from '@kb/contracts';
import { HttpException } from '@nestjs/common';
import { httpStatusFor, mappedCodes } from './error-status';
import { toHttpError } from './http-exception.filter';

describe('error mapping', () => {
  it('maps every declared error code to a status', () => {
    for (const code of Object.values(ErrorCodes)) expect(mappedCodes()).toContain(code);
  });

  it.each([
    [ErrorCodes.UNAUTHENTICATED, 401],
    [ErrorCodes.MULTIPLE_CREDENTIALS, 400],
    [ErrorCodes.FORBIDDEN, 403],
    [ErrorCodes.RESOURCE_NOT_FOUND, 404],
    [ErrorCodes.SLUG_CONFLICT, 409],
    [ErrorCodes.PAYLOAD_TOO_LARGE, 413],
    [ErrorCodes.UNSUPPORTED_MEDIA_TYPE, 415],
    [ErrorCodes.RATE_LIMITED, 429],
    [ErrorCodes.QUOTA_EXCEEDED, 402],
    ['SOMETHING_NEW', 500],
    ['EMBEDDING_FAILED', 503],
    ['GENERATION_FAILED', 503],
  ])('%s → %i', (code, status) => {
    expect(httpStatusFor(code)).toBe(status);
  });

  it("a model provider that failed is 503 with the service's own words, not an internal error", () => {
    const err = new DomainError('EMBEDDING_FAILED' as never, 'embedding provider unreachable: connect ECONNREFUSED', { retryable: true });
    expect(toHttpError(err)).toMatchObject({ status: 503, body: { detail: 'embedding provider unreachable: connect ECONNREFUSED' } });
  });

  it('renders 422 with every issue', () => {
    const issues = [
      { loc: ['body', 'title'], msg: 'bad', type: 'string_type' },
      { loc: ['body', 'slug'], msg: 'Field required', type: 'missing' },
    ];
    expect(toHttpError(DomainError.validation(issues))).toEqual({ status: 422, body: { detail: issues } });
  });

  it('renders 500 with an error id that is logged, never the message', () => {
    const logged: Record<string, unknown>[] = [];
    const logger = { error: (o: Record<string, unknown>) => logged.push(o), warn: () => undefined };
    const out = toHttpError(new Error('secret internals'), logger, 'req-1');
    expect(out.status).toBe(500);
    expect(out.body['detail']).toBe('Internal server error');
    expect(JSON.stringify(out.body)).not.toContain('secret');
    expect(logged[0]?.['error_id']).toBe(out.body['error_id']);
  });

  it('keeps the error id of a remote internal error', () => {
    const out = toHttpError(new DomainError(ErrorCodes.INTERNAL, 'Internal error', { error_id: 'abc' }));
    expect(out).toEqual({ status: 500, body: { detail: 'Internal server error', error_id: 'abc' } });
  });

  it('renders 429 with try_after and Retry-After', () => {
    const tryAfter = Math.floor(Date.now() / 1000) + 30;
    const out = toHttpError(new DomainError(ErrorCodes.RATE_LIMITED, 'slow down', { try_after: tryAfter }));
    expect(out.status).toBe(429);
    expect(out.body).toEqual({ detail: { message: 'slow down', try_after: tryAfter } });
    expect(Number(out.headers?.['Retry-After'])).toBeGreaterThan(0);
  });

  it('renders a limit that asks to wait some seconds as the Unix time to retry at, and as Retry-After in seconds', () => {
    const now = Date.now();
    const err = DomainError.rateLimited('one at a time', 10, now);
    expect(err.details).toEqual({ try_after: Math.ceil(now / 1000) + 10 });
    const out = toHttpError(err);
    expect(out.status).toBe(429);
    const retryAfter = Number(out.headers?.['Retry-After']);
    // 10 s from `now`, give or take the second boundary and the time this test took.
    expect(retryAfter).toBeGreaterThanOrEqual(9);
    expect(retryAfter).toBeLessThanOrEqual(11);
  });

  it('maps malformed JSON and oversize bodies from the body parser', () => {
    expect(toHttpError({ type: 'entity.parse.failed', status: 400, message: 'Unexpected token' }).status).toBe(422);
    expect(toHttpError({ type: 'entity.too.large', status: 413, limit: 10 }).status).toBe(413);
  });

  it('passes through client HttpExceptions as detail strings', () => {
    expect(toHttpError(new HttpException('Cannot GET /x', 404))).toEqual({ status: 404, body: { detail: 'Cannot GET /x' } });
  });
});
