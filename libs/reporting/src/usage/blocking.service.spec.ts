import { AccountsSubjects, ReportingSubjects, type EffectiveLimits, type MonthlyLimits } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { Logger } from '@kb/platform/observability';
import type { DataSource } from 'typeorm';
import { DEFAULT_REPORTING_OPTIONS } from '../reporting.tokens';
import { BlockingService } from './blocking.service';

const unlimited: EffectiveLimits = { upload: {} as EffectiveLimits['upload'], usage: {} as MonthlyLimits, processing: {} as MonthlyLimits };
const fiveSearches: EffectiveLimits = { ...unlimited, usage: { monthly_limit_hosted_searches_performed: 5 } as MonthlyLimits };

/** A limits request answered when the test says so, in any order. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('BlockingService: the limits cache', () => {
  const account = 'a1';
  let quotas: ReturnType<typeof deferred<{ found: true; limits: EffectiveLimits }>>[];
  let published: { features: string[] }[];
  let service: BlockingService;

  beforeEach(() => {
    quotas = [];
    published = [];
    const bus = {
      request: (subject: unknown) => {
        expect(subject).toBe(AccountsSubjects.accountQuota);
        const d = deferred<{ found: true; limits: EffectiveLimits }>();
        quotas.push(d);
        return d.promise;
      },
      publish: async (subject: unknown, body: { features: string[] }) => {
        if (subject === ReportingSubjects.blockingChanged) published.push(body);
      },
    } as unknown as MessageBus;
    // The account has searched 10 times this month, holds nothing per KB and was never blocked.
    const ds = {
      query: async (sql: string) => (/GROUP BY metric$/.test(sql.trim()) ? [{ metric: 'searches_performed', value: 10 }] : []),
    } as unknown as DataSource;
    const logger = { warn: jest.fn(), info: jest.fn(), debug: jest.fn(), error: jest.fn() } as unknown as Logger;
    service = new BlockingService(ds, bus, { ...DEFAULT_REPORTING_OPTIONS, limitsCacheMs: 60_000 }, logger);
  });

  const flush = () => new Promise((r) => setImmediate(r));

  it('an answer asked for before the limits changed is not cached over the new limits', async () => {
    // A batch of usage asks for the limits (still unlimited) …
    const batch = service.usageAdded([account]);
    await flush();
    expect(quotas).toHaveLength(1);
    // … the limits change meanwhile: asked again, answered at once, and the account is blocked.
    const changed = service.limitsChanged(account);
    await flush();
    expect(quotas).toHaveLength(2);
    quotas[1]?.resolve({ found: true, limits: fiveSearches });
    await changed;
    expect(published).toEqual([expect.objectContaining({ features: ['search'] })]);
    // The older answer arrives last: used by the batch that asked (unlimited: nothing decided) …
    quotas[0]?.resolve({ found: true, limits: unlimited });
    await batch;
    // … but the next batch decides with the new limits, from the cache (no third request).
    await service.usageAdded([account]);
    await service.settled();
    expect(quotas).toHaveLength(2);
    expect(published).toHaveLength(2);
    expect(published[1]).toEqual(expect.objectContaining({ features: ['search'] }));
  });

  it('caches an answer when no change came in between', async () => {
    const first = service.usageAdded([account]);
    await flush();
    quotas[0]?.resolve({ found: true, limits: fiveSearches });
    await first;
    await service.usageAdded([account]);
    await service.settled();
    expect(quotas).toHaveLength(1);
  });
});
