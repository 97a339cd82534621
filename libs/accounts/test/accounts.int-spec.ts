import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ErrorCodes, type KbEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { ObservabilityModule, createLogger } from '@kb/platform/observability';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger, type MessageBus } from '@kb/platform/messaging';
import { createTestDatabase, eventually, type TestDatabase } from '@kb/platform/testing';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS, AccountsModule, BootstrapService, type BootstrapResult } from '../src';
import { parseToken } from '../src/credentials/secret-tokens';

@Module({})
class Host {}

describe('accounts service (real PostgreSQL, in-process bus)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let bus: MessageBus;
  let app: INestApplication;
  let boot: BootstrapResult;
  const revoked: string[] = [];
  const deletedKbs: KbEvent[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('accounts');
    ds = await createServiceDataSource({
      service: 'accounts',
      schema: 'accounts',
      url: db.url,
      entities: ACCOUNTS_ENTITIES,
      migrations: ACCOUNTS_MIGRATIONS,
      runMigrations: true,
    });
    bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
    const moduleRef = await Test.createTestingModule({
      imports: [
        {
          module: Host,
          imports: [
            ObservabilityModule.forRoot({ service: 'test', logger: createLogger({ service: 'test', level: 'silent' }), checks: [] }),
            MessagingModule.forRoot(bus),
            AccountsModule.forRoot({
              dataSource: ds,
              zone: 'test-zone',
              secret: 's'.repeat(40),
              userTokenTtlSeconds: 60,
              publicBaseUrl: 'http://localhost:8080',
            }),
          ],
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await bus.subscribe(AccountsSubjects.credentialRevoked, async (e) => void revoked.push(...e.credential_ids));
    await bus.subscribe(AccountsSubjects.kbDeleted, async (e) => void deletedKbs.push(e), { durable: 'test-kb-deleted' });
    boot = (await app.get(BootstrapService).ensure('Admin@Example.com'))!;
  });

  afterAll(async () => {
    await app?.close();
    await closeServiceDataSource(ds);
    await db?.drop();
  });

  const check = (token: string, kbid?: string) => bus.request(AccountsSubjects.checkAccess, { header: 'serviceaccount', token, kbid });

  it('bootstraps once: a user, an account, its default KB and a Manager key', async () => {
    expect(boot).toMatchObject({ user: { email: 'admin@example.com' }, account: { slug: 'default' }, api_key: { role: 'Manager' } });
    expect(await app.get(BootstrapService).ensure('other@example.com')).toBeNull();
    const grant = await check(boot.api_key.token, boot.kb.id);
    expect(grant).toMatchObject({ kb_role: 'SOWNER', kb_found: true, principal: { kind: 'api_key', kb_id: boot.kb.id } });
  });

  it('stores secrets only as salted hashes', async () => {
    const dump = JSON.stringify([
      ...(await ds.query('SELECT * FROM accounts.secret_credentials')),
      ...(await ds.query('SELECT * FROM accounts.users')),
    ]);
    for (const secret of [boot.api_key.token, boot.personal_access_token.token, boot.user.password]) expect(dump).not.toContain(secret);
    for (const token of [boot.api_key.token, boot.personal_access_token.token]) {
      // the secret part alone (base64url, so it may itself contain '_') must not be stored either
      const secretPart = parseToken(token)!.secret;
      expect(secretPart).toHaveLength(43);
      expect(dump).not.toContain(secretPart);
    }
  });

  it('creates KBs with unique slugs per account, within the account limit', async () => {
    const { id } = await bus.request(AccountsSubjects.createKb, {
      account_id: boot.account.id,
      actor_user_id: boot.user.id,
      body: { slug: 'docs', title: 'Docs', sentence_embedder: 'ignored' },
    });
    const kb = await bus.request(AccountsSubjects.getKb, { account_id: boot.account.id, kb_id: id, caller_role: 'SCONTRIBUTOR' });
    expect(kb).toMatchObject({ id, slug: 'docs', title: 'Docs', zone: 'test-zone', state: 'PUBLISHED', admin: false, contrib: true });
    await expect(bus.request(AccountsSubjects.createKb, { account_id: boot.account.id, body: { slug: 'docs' } })).rejects.toMatchObject({
      code: ErrorCodes.KB_SLUG_CONFLICT,
    });
    await ds.query(`UPDATE accounts.accounts SET max_kbs = 2 WHERE id = $1`, [boot.account.id]);
    await expect(bus.request(AccountsSubjects.createKb, { account_id: boot.account.id, body: { slug: 'third' } })).rejects.toMatchObject({
      code: ErrorCodes.QUOTA_EXCEEDED,
    });
    await ds.query(`UPDATE accounts.accounts SET max_kbs = 10 WHERE id = $1`, [boot.account.id]);
  });

  it('keys open only their own KB with their role, and stop at expiry', async () => {
    const { id: kbId } = await bus.request(AccountsSubjects.createKb, { account_id: boot.account.id, body: { slug: 'keys' } });
    const { id: saId } = await bus.request(AccountsSubjects.createServiceAccount, {
      account_id: boot.account.id,
      kb_id: kbId,
      body: { title: 'reader', role: 'SMEMBER' },
    });
    const key = await bus.request(AccountsSubjects.createServiceAccountKey, {
      account_id: boot.account.id,
      kb_id: kbId,
      sa_id: saId,
      body: { expires: new Date(Date.now() + 60_000).toISOString() },
    });
    expect((await check(key.token, kbId)).kb_role).toBe('SMEMBER');
    const elsewhere = await check(key.token, boot.kb.id);
    expect(elsewhere.kb_role).toBeUndefined();
    await expect(
      bus.request(AccountsSubjects.createServiceAccountKey, {
        account_id: boot.account.id,
        kb_id: kbId,
        sa_id: saId,
        body: { expires: '2001-01-01T00:00:00Z' },
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    await ds.query(`UPDATE accounts.secret_credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    await expect(check(key.token, kbId)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
  });

  it('deleting a KB revokes its keys and tells content to delete its resources', async () => {
    const { id: kbId } = await bus.request(AccountsSubjects.createKb, { account_id: boot.account.id, body: { slug: 'doomed' } });
    const { id: saId } = await bus.request(AccountsSubjects.createServiceAccount, {
      account_id: boot.account.id,
      kb_id: kbId,
      body: { role: 'SOWNER' },
    });
    const key = await bus.request(AccountsSubjects.createServiceAccountKey, {
      account_id: boot.account.id,
      kb_id: kbId,
      sa_id: saId,
      body: { expires: new Date(Date.now() + 60_000).toISOString() },
    });
    await bus.request(AccountsSubjects.deleteKb, { account_id: boot.account.id, kb_id: kbId });
    await expect(check(key.token, kbId)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
    await eventually(async () => (revoked.includes(key.id) ? true : undefined));
    await eventually(async () => (deletedKbs.some((e) => e.kb_id === kbId) ? true : undefined));
    await expect(bus.request(AccountsSubjects.getKb, { account_id: boot.account.id, kb_id: kbId })).rejects.toMatchObject({
      code: ErrorCodes.KB_NOT_FOUND,
    });
  });

  it('resolves a personal access token to its user and the user role on a KB', async () => {
    const grant = await bus.request(AccountsSubjects.checkAccess, {
      header: 'authorization',
      token: boot.personal_access_token.token,
      kbid: boot.kb.id,
    });
    expect(grant).toMatchObject({ principal: { kind: 'pat', user_id: boot.user.id }, kb_role: 'SOWNER', account_role: 'AOWNER' });
    await expect(bus.request(AccountsSubjects.checkAccess, { header: 'authorization', token: 'not-a-token' })).rejects.toMatchObject({
      code: ErrorCodes.UNAUTHENTICATED,
    });
  });
});
