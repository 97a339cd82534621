import type { NextFunction, Request, Response } from 'express';
import { InProcessMessageBus, MemoryQueueStore, silentLogger } from '@kb/platform/messaging';
import { CorsPolicy } from './cors-policy';

/** Runs the middleware once; returns the status it refused with, or 'next' when it let the request through. */
async function run(method: string, path: string, headers: Record<string, string>): Promise<number | 'next'> {
  const policy = new CorsPolicy(new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger }), {
    globalOrigins: ['https://app.example.com'],
    cacheTtlMs: 0,
  });
  return new Promise((resolve) => {
    const res = {
      status: (code: number) => ({ json: () => resolve(code) }),
      setHeader: () => undefined,
      append: () => undefined,
    } as unknown as Response;
    policy.middleware()({ method, path, headers } as unknown as Request, res, (() => resolve('next')) as NextFunction);
  });
}

describe('CORS policy', () => {
  it.each([
    [
      "the gateway's own sign-in form (same origin)",
      'POST',
      '/auth/login',
      { origin: 'http://kb.local:8080', host: 'kb.local:8080' },
      'next',
    ],
    [
      'an identity provider auto-posting to the SAML ACS',
      'POST',
      '/api/v1/saml/acc-1/acs',
      { origin: 'https://idp.example.org', host: 'kb.local:8080' },
      'next',
    ],
    ['a configured global origin', 'GET', '/api/v1/user', { origin: 'https://app.example.com', host: 'kb.local:8080' }, 'next'],
    ['another site on an API route', 'POST', '/api/v1/accounts', { origin: 'https://evil.example', host: 'kb.local:8080' }, 403],
    ['another site on the sign-in form', 'POST', '/auth/login', { origin: 'https://evil.example', host: 'kb.local:8080' }, 403],
    [
      'a configured global origin looking a KB up by slug (no KB id in the path)',
      'GET',
      '/api/v1/kb/s/docs',
      { origin: 'https://app.example.com', host: 'kb.local:8080' },
      'next',
    ],
    ['another site looking a KB up by slug', 'GET', '/api/v1/kb/s/docs', { origin: 'https://evil.example', host: 'kb.local:8080' }, 403],
    [
      'another site on SAML login (only the ACS takes cross-site posts)',
      'POST',
      '/api/v1/saml/acc-1/login',
      { origin: 'https://evil.example', host: 'kb.local:8080' },
      403,
    ],
  ] as const)('%s', async (_name, method, path, headers, expected) => {
    expect(await run(method, path, headers)).toBe(expected);
  });
});
