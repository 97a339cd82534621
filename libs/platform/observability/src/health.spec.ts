import { runHealthChecks } from './health';

describe('runHealthChecks', () => {
  it('is ok only when every check is up', async () => {
    const up = { name: 'db', check: async () => true };
    const down = { name: 'bus', check: async () => false };
    const broken = { name: 'blob', check: async () => Promise.reject(new Error('boom')) };
    expect(await runHealthChecks([up])).toEqual({ status: 'ok', checks: { db: 'up' } });
    expect(await runHealthChecks([up, down, broken])).toEqual({ status: 'error', checks: { db: 'up', bus: 'down', blob: 'down' } });
  });

  it('counts a hanging check as down', async () => {
    const hang = { name: 'slow', check: () => new Promise<boolean>(() => undefined) };
    expect(await runHealthChecks([hang], 20)).toEqual({ status: 'error', checks: { slow: 'down' } });
  });
});
