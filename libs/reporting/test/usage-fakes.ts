import type { DataSource } from 'typeorm';
import { AccountsSubjects, type AccountBlockingDto, type EffectiveLimits, type EventDef, type RpcDef } from '@kb/contracts';
import type { Logger } from '@kb/platform/observability';
import type { MessageBus } from '@kb/platform/messaging';
import { DEFAULT_REPORTING_OPTIONS } from '../src/reporting.tokens';
import { AuditService } from '../src/audit/audit.service';
import { ChainSealerService } from '../src/chain/chain-sealer.service';
import { BlockingService } from '../src/usage/blocking.service';
import { UsageService } from '../src/usage/usage.service';

/** What the accounts service would answer: which account holds which KB, and each account's limits. */
export interface FakeAccounts {
  kbs: Map<string, string>;
  limits: Map<string, EffectiveLimits>;
  published: AccountBlockingDto[];
}

/** The two requests reporting sends and the one event it publishes, answered in memory (the bus itself has its own contract suite). */
export function fakeBus(accounts: FakeAccounts): MessageBus {
  const bus = {
    request: async (def: RpcDef<unknown, unknown>, payload: Record<string, string>) => {
      if (def.subject === AccountsSubjects.kbAccount.subject) return { account_id: accounts.kbs.get(payload['kb_id'] ?? '') ?? null };
      if (def.subject === AccountsSubjects.accountQuota.subject) {
        const limits = accounts.limits.get(payload['account_id'] ?? '');
        return { found: limits !== undefined, limits };
      }
      throw new Error(`unexpected request ${def.subject}`);
    },
    publish: async (_def: EventDef<unknown>, payload: AccountBlockingDto) => {
      accounts.published.push(payload);
    },
  };
  return bus as unknown as MessageBus;
}

const quietLogger = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

export function reportingServices(ds: DataSource, accounts: FakeAccounts = { kbs: new Map(), limits: new Map(), published: [] }) {
  const bus = fakeBus(accounts);
  const usage = new UsageService(ds, bus, quietLogger);
  const blocking = new BlockingService(ds, bus, DEFAULT_REPORTING_OPTIONS, quietLogger);
  const audit = new AuditService(ds);
  // Usage is metered when records are sealed: tests seal on demand (`meter`), no timer.
  const sealer = new ChainSealerService(ds, { ...DEFAULT_REPORTING_OPTIONS, chainSealMs: 0 }, usage, blocking);
  return { usage, blocking, audit, sealer, accounts, meter: () => sealer.sealAll() };
}
