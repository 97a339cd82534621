import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ErrorCodes, type CreateKbRequest, type KbEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { ObservabilityModule, createLogger } from '@kb/platform/observability';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger, type MessageBus } from '@kb/platform/messaging';
import { createTestDatabase, eventually, type TestDatabase } from '@kb/platform/testing';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS, AccountsModule, BootstrapService, type BootstrapResult } from '../src';
import { KbsService } from '../src/kbs/kbs.service';
import { AccountsOutbox } from '../src/outbox/accounts-outbox';

@Module({})
class Host {}

/**
 * The bus as a process that dies right after its commit sees it: once `dead`, every publish fails
 * (its events never leave); closing its app does not close the shared bus the next process uses.
 */
function deadAfterCommit(bus: MessageBus, state: { dead: boolean }): MessageBus {
  return new Proxy(bus, {
    get(target, prop, receiver) {
      if (prop === 'publish' && state.dead) return async () => Promise.reject(new Error('process gone'));
      if (prop === 'close') return async () => undefined;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('accounts outbox (real PostgreSQL, in-process bus)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let bus: MessageBus;
  const apps: INestApplication[] = [];
  const deletedKbs: KbEvent[] = [];
  const revoked: string[] = [];
  const accessChanged: string[] = [];

  const start = async (appBus: MessageBus, outbox: { outboxSweepMs?: number; outboxFirstRetryMs?: number }) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        {
          module: Host,
          imports: [
            ObservabilityModule.forRoot({ service: 'test', logger: createLogger({ service: 'test', level: 'silent' }), checks: [] }),
            MessagingModule.forRoot(appBus),
            AccountsModule.forRoot({
              dataSource: ds,
              zone: 'test-zone',
              secret: 's'.repeat(40),
              userTokenTtlSeconds: 60,
              publicBaseUrl: 'http://localhost:8080',
              ...outbox,
            }),
          ],
        },
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase('accounts_outbox');
    ds = await createServiceDataSource({
      service: 'accounts',
      schema: 'accounts',
      url: db.url,
      entities: ACCOUNTS_ENTITIES,
      migrations: ACCOUNTS_MIGRATIONS,
      runMigrations: true,
    });
    bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
    await bus.subscribe(AccountsSubjects.kbDeleted, async (e) => void deletedKbs.push(e), { durable: 'test-kb-deleted' });
    await bus.subscribe(AccountsSubjects.credentialRevoked, async (e) => void revoked.push(...e.credential_ids));
    await bus.subscribe(AccountsSubjects.accessChanged, async (e) => void accessChanged.push(...(e.kb_ids ?? [])));
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close();
    await bus?.close();
    await closeServiceDataSource(ds);
    await db?.drop();
  });

  const pending = async (): Promise<{ kind: string; target: string; payload: Record<string, unknown> }[]> =>
    ds.query(`SELECT kind, target, payload FROM accounts.outbox ORDER BY created_at`);

  it('a crash between the commit of a KB deletion and its publish: the next process publishes kbDeleted', async () => {
    // The first process: its sweep would only run long after the test, and every publish fails.
    const state = { dead: false };
    const first = await start(deadAfterCommit(bus, state), { outboxSweepMs: 3_600_000, outboxFirstRetryMs: 0 });
    const boot: BootstrapResult = (await first.get(BootstrapService).ensure('owner@example.com'))!;
    state.dead = true;
    const kbId = boot.kb.id;

    await expect(bus.request(AccountsSubjects.deleteKb, { account_id: boot.account.id, kb_id: kbId })).resolves.toEqual({});
    // The deletion is committed, its events are not out: they wait in the outbox, in order.
    await expect(bus.request(AccountsSubjects.getKb, { account_id: boot.account.id, kb_id: kbId })).rejects.toMatchObject({
      code: ErrorCodes.KB_NOT_FOUND,
    });
    expect((await pending()).map((r) => r.target)).toEqual([
      AccountsSubjects.credentialRevoked.subject,
      AccountsSubjects.accessChanged.subject,
      AccountsSubjects.kbDeleted.subject,
    ]);
    expect(deletedKbs.some((e) => e.kb_id === kbId)).toBe(false);
    expect(revoked).not.toContain(boot.api_key.id);
    await first.get(AccountsOutbox).stop();

    // The next process sweeps what the first left: content is told, the keys are revoked everywhere.
    await start(bus, { outboxSweepMs: 100, outboxFirstRetryMs: 0 });
    await eventually(async () => (deletedKbs.some((e) => e.kb_id === kbId) ? true : undefined), 10_000, 'kbDeleted from the outbox sweep');
    expect(deletedKbs.find((e) => e.kb_id === kbId)).toEqual({ account_id: boot.account.id, kb_id: kbId });
    expect(revoked).toContain(boot.api_key.id);
    expect(accessChanged).toContain(kbId);
    await eventually(async () => ((await pending()).length === 0 ? true : undefined), 5_000, 'the relayed rows to be deleted');
  });

  it('with a working bus the events go out right after the commit, and no row stays behind', async () => {
    const [account] = (await ds.query(`SELECT id FROM accounts.accounts ORDER BY created_at LIMIT 1`)) as { id: string }[];
    // Straight to the second process's service: the first one's RPC handlers still answer on the shared bus.
    const kbs = apps[apps.length - 1]!.get(KbsService);
    const { id: kbId } = await kbs.create({ account_id: account!.id, body: { slug: 'second' } } as CreateKbRequest);
    await kbs.delete({ account_id: account!.id, kb_id: kbId });
    // Relayed before the answer: its rows are already deleted (the sweep of this app waits 100 ms).
    expect(await pending()).toEqual([]);
    await eventually(
      async () => (deletedKbs.some((e) => e.kb_id === kbId) && accessChanged.includes(kbId) ? true : undefined),
      5_000,
      'kbDeleted and accessChanged',
    );
  });
});
