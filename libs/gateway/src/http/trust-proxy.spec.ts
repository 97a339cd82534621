import express from 'express';
import request from 'supertest';
import { parseTrustProxy } from '../gateway.app';
import { clientKey } from './client-rate-limit';

/** The client address the limits count by, as express derives it from TRUSTED_PROXIES. */
async function clientOf(trustedProxies: string | undefined, forwardedFor?: string): Promise<string> {
  const app = express();
  app.set('trust proxy', parseTrustProxy(trustedProxies));
  app.get('/', (req, res) => res.send(clientKey(req.ip ?? '')));
  const req = request(app).get('/');
  return (await (forwardedFor ? req.set('x-forwarded-for', forwardedFor) : req)).text;
}

describe('TRUSTED_PROXIES', () => {
  it('ignores X-Forwarded-For unless the peer is a named proxy', async () => {
    expect(await clientOf(undefined, '203.0.113.9')).toBe('127.0.0.1');
    expect(await clientOf('10.0.0.0/8', '203.0.113.9')).toBe('127.0.0.1');
    expect(await clientOf('loopback', '203.0.113.9')).toBe('203.0.113.9');
    // Only the hop the trusted proxy appended counts: a client cannot prepend its own choice.
    expect(await clientOf('loopback', '198.51.100.1, 203.0.113.9')).toBe('203.0.113.9');
    expect(await clientOf('1', '198.51.100.1, 203.0.113.9')).toBe('203.0.113.9');
  });

  it('parses a hop count, a list, or nothing; refuses `true`', () => {
    expect(parseTrustProxy('')).toBe(false);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback, 10.0.0.0/8')).toEqual(['loopback', '10.0.0.0/8']);
    expect(() => parseTrustProxy('true')).toThrow(/every peer/);
  });
});
