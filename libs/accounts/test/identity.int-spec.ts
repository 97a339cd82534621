import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ErrorCodes } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger, type MessageBus } from '@kb/platform/messaging';
import { ObservabilityModule, createLogger } from '@kb/platform/observability';
import { createTestDatabase, eventually, type TestDatabase } from '@kb/platform/testing';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS, AccountsModule } from '../src';

@Module({})
class Host {}

const PASSWORD = 'correct horse battery staple';

describe('identity: users, accounts, invitations, temporal and UA keys', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let bus: MessageBus;
  let app: INestApplication;
  let smtp: SMTPServer;
  const mails: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, done) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString()));
        stream.on('end', () => {
          mails.push(raw);
          done();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    db = await createTestDatabase('identity');
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
              zone: 'z',
              secret: 's'.repeat(40),
              userTokenTtlSeconds: 60,
              publicBaseUrl: 'http://kb.test',
              smtp: { url: `smtp://127.0.0.1:${smtpPort}?ignoreTLS=true`, from: 'kb@kb.test' },
            }),
          ],
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await closeServiceDataSource(ds);
    await db?.drop();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  const signUp = (email: string) =>
    bus.request(AccountsSubjects.signUp, { body: { email, password: PASSWORD, name: email.split('@')[0] } });
  const asUser = (token: string, target: { kbid?: string; account?: string } = {}) =>
    bus.request(AccountsSubjects.checkAccess, { header: 'authorization', token, ...target });

  it('signs up and in; a user token works; wrong passwords slow down that client only', async () => {
    const up = await signUp('ada@example.com');
    expect((await asUser(up.token)).principal).toMatchObject({ kind: 'user_token', user_id: up.user_id });
    await expect(signUp('ADA@example.com')).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    const ok = await bus.request(AccountsSubjects.signIn, { body: { email: 'Ada@Example.com', password: PASSWORD }, ip: '192.0.2.1' });
    expect(ok.user_id).toBe(up.user_id);
    // Three typos are free; then each failure makes the next attempt from that client wait longer.
    const attempts: string[] = [];
    for (let i = 0; i < 12; i++) {
      attempts.push(
        await bus
          .request(AccountsSubjects.signIn, { body: { email: 'ada@example.com', password: 'wrong password!' }, ip: '192.0.2.66' })
          .then(
            () => 'ok',
            (e: { code: string }) => e.code,
          ),
      );
    }
    expect(attempts.slice(0, 4)).toEqual(Array(4).fill(ErrorCodes.UNAUTHENTICATED));
    expect(attempts).toContain(ErrorCodes.RATE_LIMITED);
    // A guesser far along (ten failures: 64 s to wait) is refused even the right password, with the time to come back.
    await ds.query(`UPDATE accounts.sign_in_throttle SET failures = 10, last_failure = now() WHERE key LIKE 'pair:192.0.2.66|%'`);
    await expect(
      bus.request(AccountsSubjects.signIn, { body: { email: 'ada@example.com', password: PASSWORD }, ip: '192.0.2.66' }),
    ).rejects.toMatchObject({
      code: ErrorCodes.RATE_LIMITED,
      details: { try_after: expect.any(Number) },
    });
    // The owner, from their own address, is not locked out by the guesser.
    expect(
      (await bus.request(AccountsSubjects.signIn, { body: { email: 'ada@example.com', password: PASSWORD }, ip: '192.0.2.1' })).user_id,
    ).toBe(up.user_id);
    await expect(
      bus.request(AccountsSubjects.signIn, { body: { email: 'nobody@example.com', password: PASSWORD }, ip: '192.0.2.1' }),
    ).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
  });

  it('creates an account with its default KB; the creator owns both; slugs are unique', async () => {
    const user = await signUp('owner@example.com');
    const { id } = await bus.request(AccountsSubjects.createAccount, { user_id: user.user_id, body: { slug: 'acme', title: 'Acme' } });
    await expect(bus.request(AccountsSubjects.createAccount, { user_id: user.user_id, body: { slug: 'acme' } })).rejects.toMatchObject({
      code: ErrorCodes.ACCOUNT_SLUG_CONFLICT,
    });
    const record = await bus.request(AccountsSubjects.getAccount, { account: 'acme', user_id: user.user_id });
    expect(record).toMatchObject({
      id,
      slug: 'acme',
      can_manage_account: true,
      current_users: 1,
      current_kbs: 1,
      blocking_state: 'unblocked',
      saml_config: null,
    });
    expect(record.limits.upload.upload_limit_max_non_media_file_size).toBeGreaterThan(0);
    expect(Object.keys(record.limits.usage)).toHaveLength(12);
    const kbs = await bus.request(AccountsSubjects.listKbs, { account_id: id, user_id: user.user_id });
    expect(kbs).toEqual([expect.objectContaining({ slug: 'default', role_on_kb: 'SOWNER' })]);
    expect((await bus.request(AccountsSubjects.getUser, { user_id: user.user_id })).dependant_accounts).toEqual([{ id, slug: 'acme' }]);
    await expect(bus.request(AccountsSubjects.deleteUser, { user_id: user.user_id })).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    await bus.request(AccountsSubjects.modifyAccount, {
      account: id,
      user_id: user.user_id,
      body: { slug: 'acme-inc', title: 'Acme Inc.' },
    });
    expect((await bus.request(AccountsSubjects.getAccount, { account: 'acme-inc', user_id: user.user_id })).title).toBe('Acme Inc.');
  });

  it('an invitation is mailed, and accepting it with the invited address grants the KB role', async () => {
    const owner = await signUp('boss@example.com');
    const { id: accountId } = await bus.request(AccountsSubjects.createAccount, { user_id: owner.user_id, body: { slug: 'inv' } });
    const [kb] = await bus.request(AccountsSubjects.listKbs, { account_id: accountId, user_id: owner.user_id });
    const created = await bus.request(AccountsSubjects.inviteToKb, {
      account_id: accountId,
      kb_id: kb!.id,
      invited_by: owner.user_id,
      body: { email: 'Guest@Example.com', role: 'SCONTRIBUTOR' },
    });
    expect(created).toMatchObject({ email: 'guest@example.com', role: 'SCONTRIBUTOR', sent: true });
    expect(created.invite_url).toBeUndefined();
    const mail = await eventually(async () => mails.find((m) => m.includes('guest@example.com')));
    // The body is quoted-printable: join soft line breaks, decode =XX.
    const body = mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const token = /http:\/\/kb\.test\/auth\/invite\?token=([A-Za-z0-9._-]+)/.exec(body)![1]!;
    expect(await bus.request(AccountsSubjects.listKbInvites, { account_id: accountId, kb_id: kb!.id })).toEqual([
      expect.objectContaining({ email: 'guest@example.com' }),
    ]);

    const stranger = await signUp('stranger@example.com');
    await expect(bus.request(AccountsSubjects.acceptInvite, { user_id: stranger.user_id, token })).rejects.toMatchObject({
      code: ErrorCodes.FORBIDDEN,
    });
    const guest = await signUp('guest@example.com');
    expect(await bus.request(AccountsSubjects.acceptInvite, { user_id: guest.user_id, token })).toMatchObject({
      account_id: accountId,
      kb_id: kb!.id,
      role: 'SCONTRIBUTOR',
    });
    expect((await asUser(guest.token, { kbid: kb!.id })).kb_role).toBe('SCONTRIBUTOR');
    await expect(bus.request(AccountsSubjects.acceptInvite, { user_id: guest.user_id, token })).rejects.toMatchObject({
      code: ErrorCodes.NOT_FOUND,
    });
    await expect(
      bus.request(AccountsSubjects.acceptInvite, { user_id: guest.user_id, token: token.slice(0, -3) + 'abc' }),
    ).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });

    const users = await bus.request(AccountsSubjects.listKbUsers, { account_id: accountId, kb_id: kb!.id, include_user_detail: true });
    expect(users.map((u) => u.email).sort()).toEqual(['boss@example.com', 'guest@example.com']);
    await bus.request(AccountsSubjects.updateKbUsers, {
      account_id: accountId,
      kb_id: kb!.id,
      body: { update: [{ id: guest.user_id, role: 'SMEMBER' }] },
    });
    await expect(
      bus.request(AccountsSubjects.updateKbUsers, {
        account_id: accountId,
        kb_id: kb!.id,
        body: { add: [{ id: stranger.user_id, role: 'SMEMBER' }] },
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    await expect(
      bus.request(AccountsSubjects.updateAccountUsers, { account: accountId, user_id: owner.user_id, body: { delete: [owner.user_id] } }),
    ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    expect(
      (await bus.request(AccountsSubjects.searchAccountUsers, { account: accountId, user_id: owner.user_id, query: 'GUEST' })).map(
        (u) => u.email,
      ),
    ).toEqual(['guest@example.com']);
  });

  it('sign-up mails a link that verifies the address; an e-mail change needs a new proof', async () => {
    const isVerified = async (id: string) =>
      (await ds.query(`SELECT email_verified_at FROM accounts.users WHERE id = $1`, [id]))[0].email_verified_at !== null;
    const linkIn = async (address: string, nth = 1) => {
      const found = await eventually(async () => {
        const all = mails.filter((m) => m.includes(`To: ${address}`) && m.includes('verify-email'));
        return all.length >= nth ? all[nth - 1] : undefined;
      });
      const body = found.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      return /\/auth\/verify-email\?token=([A-Za-z0-9._-]+)/.exec(body)![1]!;
    };
    const up = await signUp('vera@example.com');
    expect(up.email_verification).toEqual({ email: 'vera@example.com', sent: true });
    expect(await isVerified(up.user_id)).toBe(false);
    const token = await linkIn('vera@example.com');
    await expect(bus.request(AccountsSubjects.verifyEmail, { token: token.slice(0, -2) + 'xx' })).rejects.toMatchObject({
      code: ErrorCodes.NOT_FOUND,
    });
    expect(await bus.request(AccountsSubjects.verifyEmail, { token })).toEqual({ user_id: up.user_id, email: 'vera@example.com' });
    expect(await isVerified(up.user_id)).toBe(true);
    await expect(bus.request(AccountsSubjects.sendEmailVerification, { user_id: up.user_id })).rejects.toMatchObject({
      code: ErrorCodes.CONFLICT,
    });

    await bus.request(AccountsSubjects.modifyUser, { user_id: up.user_id, body: { email: 'vera@new.example.com' } });
    expect(await isVerified(up.user_id)).toBe(false);
    // The old address's link no longer verifies anything; the new address's does.
    await expect(bus.request(AccountsSubjects.verifyEmail, { token })).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
    await bus.request(AccountsSubjects.verifyEmail, { token: await linkIn('vera@new.example.com') });
    expect(await isVerified(up.user_id)).toBe(true);
  });

  it('temporal keys act as their parent for at most 10 s, carry groups, and die with the parent', async () => {
    const owner = await signUp('tk@example.com');
    const { id: accountId } = await bus.request(AccountsSubjects.createAccount, { user_id: owner.user_id, body: { slug: 'tk' } });
    const [kb] = await bus.request(AccountsSubjects.listKbs, { account_id: accountId, user_id: owner.user_id });
    const { id: saId } = await bus.request(AccountsSubjects.createServiceAccount, {
      account_id: accountId,
      kb_id: kb!.id,
      body: { role: 'SMEMBER' },
    });
    const key = await bus.request(AccountsSubjects.createServiceAccountKey, {
      account_id: accountId,
      kb_id: kb!.id,
      sa_id: saId,
      body: { expires: new Date(Date.now() + 60_000).toISOString() },
    });
    const plain = await bus.request(AccountsSubjects.createTemporalKey, { parent_key_id: key.id, body: {} });
    const check = (token: string) => bus.request(AccountsSubjects.checkAccess, { header: 'serviceaccount', token, kbid: kb!.id });
    expect(await check(plain.token)).toMatchObject({ kb_role: 'SMEMBER', principal: { kind: 'temporal_key', credential_id: key.id } });
    // Checked right after creation, with a TTL that survives a loaded CI machine, then left to expire.
    const grouped = await bus.request(AccountsSubjects.createTemporalKey, {
      parent_key_id: key.id,
      body: { ttl: 3, security_groups: ['sales'] },
    });
    const groupedAt = Date.now();
    expect((await check(grouped.token)).principal.security_groups).toEqual(['sales']);
    await new Promise((r) => setTimeout(r, Math.max(0, groupedAt + 4100 - Date.now())));
    await expect(check(grouped.token)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
    await bus.request(AccountsSubjects.deleteServiceAccountKey, { account_id: accountId, kb_id: kb!.id, sa_id: saId, key_id: key.id });
    await expect(check(plain.token)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
  });

  it('UA keys: one live key per client, renewing or deleting stops the old one', async () => {
    const owner = await signUp('ua@example.com');
    const { id: accountId } = await bus.request(AccountsSubjects.createAccount, { user_id: owner.user_id, body: { slug: 'ua' } });
    const created = await bus.request(AccountsSubjects.createNuaClient, {
      account_id: accountId,
      body: { contact: 'ops@example.com', client_id: 'pipe', processing_webhook: { uri: 'https://hooks.example.com/x' } },
    });
    const ua = (token: string) => bus.request(AccountsSubjects.checkAccess, { header: 'uakey', token });
    expect((await ua(created.token)).principal).toMatchObject({ kind: 'ua_key', id: created.internal_id, account_id: accountId });
    await expect(
      bus.request(AccountsSubjects.createNuaClient, { account_id: accountId, body: { contact: 'x', client_id: 'pipe' } }),
    ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
    expect((await bus.request(AccountsSubjects.listNuaClients, { account_id: accountId, client_id: 'pipe' })).clients[0]).toMatchObject({
      processing_webhook: { uri: 'https://hooks.example.com/x' },
    });
    expect((await bus.request(AccountsSubjects.getNuaClient, { account_id: accountId, client: created.internal_id })).client_id).toBe(
      'pipe',
    );
    const renewed = await bus.request(AccountsSubjects.renewNuaClientKey, { account_id: accountId, client: 'pipe' });
    await expect(ua(created.token)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
    expect((await ua(renewed.token)).principal.kind).toBe('ua_key');
    await bus.request(AccountsSubjects.deleteNuaClient, { account_id: accountId, client: 'pipe' });
    await expect(ua(renewed.token)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
  });

  it('personal access tokens: create, list, delete (then refused)', async () => {
    const user = await signUp('pat@example.com');
    const pat = await bus.request(AccountsSubjects.createPersonalToken, { user_id: user.user_id, body: { description: 'ci' } });
    expect(Date.parse(pat.expires) - Date.now()).toBeGreaterThan(364 * 24 * 3600 * 1000);
    expect((await asUser(pat.token)).principal).toMatchObject({ kind: 'pat', user_id: user.user_id });
    expect(await bus.request(AccountsSubjects.listPersonalTokens, { user_id: user.user_id })).toEqual([
      expect.objectContaining({ id: pat.id, description: 'ci' }),
    ]);
    await bus.request(AccountsSubjects.deletePersonalToken, { user_id: user.user_id, token_id: pat.id });
    await expect(asUser(pat.token)).rejects.toMatchObject({ code: ErrorCodes.UNAUTHENTICATED });
    await expect(
      bus.request(AccountsSubjects.createPersonalToken, {
        user_id: user.user_id,
        body: { description: 'old', expiration_date: '2001-01-01T00:00:00Z' },
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
  });

  it('validates learning configurations and seals provider keys', async () => {
    const owner = await signUp('models@example.com');
    const { id: accountId } = await bus.request(AccountsSubjects.createAccount, { user_id: owner.user_id, body: { slug: 'models' } });
    await expect(
      bus.request(AccountsSubjects.createKb, {
        account_id: accountId,
        body: {
          slug: 'bad',
          learning_configuration: { semantic_models: ['no-such-model'], generative_model: 'chatgpt-4o', summary: 'huge' },
        },
      }),
    ).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
      details: {
        detail: expect.arrayContaining([
          expect.objectContaining({ loc: ['body', 'learning_configuration', 'semantic_models', 0] }),
          expect.objectContaining({
            loc: ['body', 'learning_configuration', 'generative_model'],
            msg: expect.stringContaining('user_keys.openai'),
          }),
          expect.objectContaining({ loc: ['body', 'learning_configuration', 'summary'] }),
        ]),
      },
    });
    const { id: kbId } = await bus.request(AccountsSubjects.createKb, {
      account_id: accountId,
      body: { slug: 'good', learning_configuration: { semantic_models: ['en-use-lite-2024'], generative_model: 'extractive' } },
    });
    const config = await bus.request(AccountsSubjects.setKbConfig, {
      kb_id: kbId,
      mode: 'update',
      config: { generative_model: 'chatgpt-4o', user_keys: { openai: { key: 'sk-very-secret-value', model: 'gpt-4o' } } },
    });
    expect(config).toMatchObject({
      generative_model: 'chatgpt-4o',
      user_keys: { openai: { key: '********', model: 'gpt-4o' } },
      semantic_models: ['en-use-lite-2024'],
      semantic_vector_size: 512,
    });
    expect(
      JSON.stringify(await ds.query('SELECT learning_configuration FROM accounts.knowledge_boxes WHERE id = $1', [kbId])),
    ).not.toContain('sk-very-secret-value');
    // The configuration sent back as read (key masked, model changed) keeps the stored key; the mask is never stored.
    const again = { ...(config['user_keys'] as Record<string, Record<string, unknown>>)['openai'], model: 'gpt-4o-mini' };
    await bus.request(AccountsSubjects.setKbConfig, { kb_id: kbId, mode: 'update', config: { user_keys: { openai: again } } });
    expect((await bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbId }))['user_keys']).toEqual({
      openai: { key: 'sk-very-secret-value', model: 'gpt-4o-mini' },
    });
    await expect(
      bus.request(AccountsSubjects.setKbConfig, { kb_id: kbId, mode: 'update', config: { semantic_models: ['text-embedding-3-small'] } }),
    ).rejects.toMatchObject({ code: ErrorCodes.VALIDATION_FAILED });
    expect(await bus.request(AccountsSubjects.learningSchema, {})).toHaveProperty('semantic_models.multiple', true);
  });

  it('keeps every secret only as a salted hash', async () => {
    const dump = JSON.stringify([
      ...(await ds.query('SELECT * FROM accounts.secret_credentials')),
      ...(await ds.query('SELECT * FROM accounts.users')),
    ]);
    expect(dump).not.toContain(PASSWORD);
    expect(dump).not.toMatch(/kb[kpu]_[0-9a-f]{32}_/);
  });
});
