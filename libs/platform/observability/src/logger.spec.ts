import { Writable } from 'node:stream';
import { createLogger } from './logger';

describe('createLogger', () => {
  it('writes JSON lines with the service name and never a credential', () => {
    const lines: string[] = [];
    const destination = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const logger = createLogger({ service: 'gateway', destination });
    logger.info({ headers: { authorization: 'Bearer abc', 'x-svc-serviceaccount': 'Bearer key', accept: 'json' }, token: 't0k' }, 'hello');
    const line = JSON.parse(lines[0] ?? '{}');
    expect(line).toMatchObject({ service: 'gateway', level: 'info', msg: 'hello' });
    expect(lines[0]).not.toContain('abc');
    expect(lines[0]).not.toContain('Bearer key');
    expect(lines[0]).not.toContain('t0k');
    expect(line.headers.accept).toBe('json');
  });
});
