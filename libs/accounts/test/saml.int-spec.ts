import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ErrorCodes } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { ObservabilityModule, createLogger } from '@kb/platform/observability';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger, type MessageBus } from '@kb/platform/messaging';
import {
  buildSamlResponse,
  createTestDatabase,
  createTestIdp,
  readAuthnRequest,
  samlResponseXml,
  signSamlResponse,
  type SamlResponseOptions,
  type TestDatabase,
  type TestIdp,
} from '@kb/platform/testing';
import { ACCOUNTS_ENTITIES, ACCOUNTS_MIGRATIONS, AccountsModule, BootstrapService } from '../src';

@Module({})
class Host {}

const BASE = 'http://kb.test';
const SSO_URL = 'https://idp.acme.test/sso';

describe('SAML single sign-on: the service provider against an in-test identity provider', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let bus: MessageBus;
  let app: INestApplication;
  let idp: TestIdp;
  let otherIdp: TestIdp;
  let accountId: string;
  let entityId: string;
  let acsUrl: string;

  beforeAll(async () => {
    [db, idp, otherIdp] = await Promise.all([
      createTestDatabase('saml'),
      createTestIdp('https://idp.acme.test/metadata'),
      createTestIdp('https://idp.acme.test/metadata'),
    ]);
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
              publicBaseUrl: `${BASE}/`,
            }),
          ],
        },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const boot = (await app.get(BootstrapService).ensure('owner@example.com'))!;
    ({ id: accountId } = await bus.request(AccountsSubjects.createAccount, {
      user_id: boot.user.id,
      body: { slug: 'acme', title: 'Acme' },
    }));
    entityId = `${BASE}/api/v1/saml/${accountId}/metadata`;
    acsUrl = `${BASE}/api/v1/saml/${accountId}/acs`;
    // Set directly: the account-modify API is not what is under test here.
    const config = {
      domains: ['acme.test', 'acme-labs.test'],
      sso_url: SSO_URL,
      entity_id: idp.entityId,
      x509_cert: idp.cert,
      authn_context: 'minimum',
    };
    await ds.query(`UPDATE accounts.accounts SET saml_config = $2 WHERE id = $1`, [accountId, JSON.stringify(config)]);
    // Verified claims, as the DNS check leaves them (the check itself is the e2e's and domain-resolver.spec's).
    await verifyDomains(accountId, ['acme.test', 'acme-labs.test']);
  });

  const verifyDomains = async (account: string, domains: string[]) => {
    for (const d of domains) {
      await ds.query(`INSERT INTO accounts.saml_domains (account_id, domain, token, verified_at) VALUES ($1, $2, 'tok', now())`, [
        account,
        d,
      ]);
    }
  };

  afterAll(async () => {
    await app?.close();
    if (ds) await closeServiceDataSource(ds);
    await db?.drop();
  });

  const startLogin = async () => {
    const { redirect_url } = await bus.request(AccountsSubjects.samlLogin, { account_id: accountId, relay_state: 'r1' });
    expect(redirect_url.startsWith(`${SSO_URL}?`)).toBe(true);
    return readAuthnRequest(redirect_url);
  };
  const acs = (samlResponse: string) => bus.request(AccountsSubjects.samlAcs, { account_id: accountId, saml_response: samlResponse });
  const respond = async (over: Partial<SamlResponseOptions> = {}) => {
    const request = await startLogin();
    return buildSamlResponse(idp, { inResponseTo: request.id, email: 'ada@acme.test', acsUrl, audience: entityId, ...over });
  };
  const refused = (why: RegExp) => ({ code: ErrorCodes.UNAUTHENTICATED, message: expect.stringMatching(why) });

  it('discovers the account by e-mail domain (case-insensitive), and the older single-provider form by its domain', async () => {
    expect(await bus.request(AccountsSubjects.discoverSso, { email: 'Ada@ACME-Labs.test' })).toEqual({
      account_id: accountId,
      login_path: `/api/v1/saml/${accountId}/login`,
    });
    expect(await bus.request(AccountsSubjects.discoverSso, { email: 'ada@elsewhere.test' })).toEqual({ account_id: null });
    const boot = await ds.query(`SELECT id FROM accounts.accounts WHERE slug = 'default'`);
    await ds.query(
      `UPDATE accounts.accounts SET domain = 'legacy.test', saml_entity_id = 'https://old-idp', saml_sso_url = 'https://old-idp/sso', saml_x509_cert = $2 WHERE id = $1`,
      [boot[0].id, idp.cert],
    );
    // Configured but not verified: discovery does not send the domain's users anywhere.
    expect(await bus.request(AccountsSubjects.discoverSso, { email: 'bob@Legacy.test' })).toEqual({ account_id: null });
    await verifyDomains(boot[0].id, ['legacy.test']);
    expect(await bus.request(AccountsSubjects.discoverSso, { email: 'bob@Legacy.test' })).toMatchObject({ account_id: boot[0].id });
  });

  it('publishes SP metadata with our entity id and ACS URL', async () => {
    const { xml } = await bus.request(AccountsSubjects.samlMetadata, { account_id: accountId });
    expect(xml).toContain(`entityID="${entityId}"`);
    expect(xml).toMatch(new RegExp(`AssertionConsumerService[^>]*Location="${acsUrl.replace(/[.?]/g, '\\$&')}"`));
  });

  it('sends an AuthnRequest over HTTP-Redirect with our issuer, ACS URL and the requested authn context', async () => {
    const request = await startLogin();
    expect(request).toMatchObject({ acsUrl, issuer: entityId, relayState: 'r1' });
    expect(request.xml).toContain('Comparison="minimum"');
    const stored = await ds.query(`SELECT account_id, expires_at FROM accounts.saml_requests WHERE id = $1`, [request.id]);
    expect(stored[0].account_id).toBe(accountId);
    expect(new Date(stored[0].expires_at).getTime() - Date.now()).toBeLessThanOrEqual(10 * 60_000);
  });

  it('signs a user in: creates them once (no password), makes them an AMEMBER, returns a user token', async () => {
    const first = await acs(await respond());
    expect(first).toMatchObject({ token: expect.any(String), expires: expect.any(String), user_id: expect.any(String) });
    const grant = await bus.request(AccountsSubjects.checkAccess, { header: 'authorization', token: first.token, account: accountId });
    expect(grant).toMatchObject({ principal: { user_id: first.user_id }, account_role: 'AMEMBER' });
    // A second login (response-level signature this time) finds the same user and membership.
    const second = await acs(await respond({ sign: 'response', email: 'Ada@Acme.test' }));
    expect(second.user_id).toBe(first.user_id);
    expect(await ds.query(`SELECT password_hash FROM accounts.users WHERE email = 'ada@acme.test'`)).toEqual([{ password_hash: null }]);
    expect(
      await ds.query(`SELECT role FROM accounts.account_users WHERE account_id = $1 AND user_id = $2`, [accountId, first.user_id]),
    ).toEqual([{ role: 'AMEMBER' }]);
    await expect(acs(await respond({ sign: 'both', email: 'carol@acme-labs.test' }))).resolves.toMatchObject({ token: expect.any(String) });
  });

  it('refuses a response signed with another key', async () => {
    await expect(acs(await respond({ signingKey: otherIdp.privateKey }))).rejects.toMatchObject(refused(/signature/i));
  });

  it('refuses a tampered assertion (e-mail changed after signing)', async () => {
    const request = await startLogin();
    const signed = signSamlResponse(
      idp,
      samlResponseXml(idp, { inResponseTo: request.id, email: 'ada@acme.test', acsUrl, audience: entityId }),
    );
    const tampered = signed.replace('>ada@acme.test</saml:NameID>', '>mallory@acme.test</saml:NameID>');
    expect(tampered).not.toBe(signed);
    await expect(acs(Buffer.from(tampered).toString('base64'))).rejects.toMatchObject(refused(/signature/i));
  });

  it('refuses the wrong audience', async () => {
    await expect(acs(await respond({ audience: 'https://another-sp.test/metadata' }))).rejects.toMatchObject(refused(/audience/i));
  });

  it('refuses the wrong recipient, and the wrong destination', async () => {
    await expect(acs(await respond({ recipient: 'https://evil.test/acs' }))).rejects.toMatchObject(refused(/Recipient/));
    await expect(acs(await respond({ destination: 'https://evil.test/acs' }))).rejects.toMatchObject(refused(/Destination/));
  });

  it('refuses an assertion from another issuer', async () => {
    await expect(acs(await respond({ issuer: 'https://other-idp.test' }))).rejects.toMatchObject(refused(/issued by/));
  });

  it('refuses an expired assertion (NotOnOrAfter in the past beyond the clock skew)', async () => {
    const past = (min: number) => new Date(Date.now() - min * 60_000);
    await expect(acs(await respond({ notBefore: past(10), notOnOrAfter: past(5) }))).rejects.toMatchObject(
      refused(/expired|subject confirmation/i),
    );
  });

  it('refuses a replayed assertion', async () => {
    const response = await respond();
    await expect(acs(response)).resolves.toMatchObject({ token: expect.any(String) });
    await expect(acs(response)).rejects.toMatchObject(refused(/replay/));
    // The same assertion id answering a fresh request of ours is a replay too.
    const assertionId = '_a-seen-once';
    await expect(acs(await respond({ assertionId }))).resolves.toMatchObject({ token: expect.any(String) });
    await expect(acs(await respond({ assertionId }))).rejects.toMatchObject(refused(/replay/));
    expect(
      await ds.query(`SELECT count(*)::int AS n FROM accounts.saml_assertions WHERE assertion_id = $1 AND expires_at > now()`, [
        assertionId,
      ]),
    ).toEqual([{ n: 1 }]);
  });

  it('refuses a response to a request we never issued, and one whose request was already answered', async () => {
    await expect(
      acs(buildSamlResponse(idp, { inResponseTo: '_never-issued', email: 'ada@acme.test', acsUrl, audience: entityId })),
    ).rejects.toMatchObject(refused(/InResponseTo/));
    const request = await startLogin();
    const build = () => buildSamlResponse(idp, { inResponseTo: request.id, email: 'ada@acme.test', acsUrl, audience: entityId });
    await expect(acs(build())).resolves.toMatchObject({ token: expect.any(String) });
    await expect(acs(build())).rejects.toMatchObject(refused(/already used/));
  });

  it('refuses an e-mail address outside the configured domains', async () => {
    await expect(acs(await respond({ email: 'ada@evil.test' }))).rejects.toMatchObject(refused(/domain/));
  });

  it('never signs in an existing user the IdP did not provision: the administrator, a password user', async () => {
    await ds.query(`UPDATE accounts.users SET email = 'root@acme.test' WHERE email = 'owner@example.com'`);
    await bus.request(AccountsSubjects.signUp, { body: { email: 'pw@acme.test', password: 'correct horse battery staple' } });
    for (const email of ['root@acme.test', 'pw@acme.test']) {
      await expect(acs(await respond({ email }))).rejects.toMatchObject(refused(/did not create/));
    }
    const members = await ds.query(
      `SELECT u.email FROM accounts.account_users au JOIN accounts.users u ON u.id = au.user_id WHERE au.account_id = $1 AND u.email IN ('root@acme.test', 'pw@acme.test') AND au.role = 'AMEMBER'`,
      [accountId],
    );
    expect(members).toEqual([]);
    await ds.query(`UPDATE accounts.users SET email = 'owner@example.com' WHERE email = 'root@acme.test'`);
  });

  it('links the IdP identity to the signed-in user who started the link request, and only to them', async () => {
    const user = await bus.request(AccountsSubjects.signUp, {
      body: { email: 'linker@acme.test', password: 'correct horse battery staple' },
    });
    await expect(acs(await respond({ email: 'linker@acme.test' }))).rejects.toMatchObject(refused(/did not create/));
    const { redirect_url } = await bus.request(AccountsSubjects.samlLink, { account_id: accountId, user_id: user.user_id });
    const request = readAuthnRequest(redirect_url);
    const linked = await acs(buildSamlResponse(idp, { inResponseTo: request.id, email: 'linker@acme.test', acsUrl, audience: entityId }));
    expect(linked.user_id).toBe(user.user_id);
    // From now on a plain login with that identity is this user.
    expect((await acs(await respond({ email: 'Linker@acme.test' }))).user_id).toBe(user.user_id);
    // The same identity cannot be linked to a second user.
    const other = await bus.request(AccountsSubjects.signUp, {
      body: { email: 'other@example.com', password: 'correct horse battery staple' },
    });
    const second = readAuthnRequest(
      (await bus.request(AccountsSubjects.samlLink, { account_id: accountId, user_id: other.user_id })).redirect_url,
    );
    await expect(
      acs(buildSamlResponse(idp, { inResponseTo: second.id, email: 'linker@acme.test', acsUrl, audience: entityId })),
    ).rejects.toMatchObject({ code: ErrorCodes.CONFLICT });
  });

  it('refuses an address of a configured domain that is not verified yet', async () => {
    await ds.query(`UPDATE accounts.saml_domains SET verified_at = NULL WHERE account_id = $1 AND domain = 'acme-labs.test'`, [accountId]);
    await expect(acs(await respond({ email: 'new@acme-labs.test' }))).rejects.toMatchObject(refused(/not verified/));
    expect(await bus.request(AccountsSubjects.discoverSso, { email: 'new@acme-labs.test' })).toEqual({ account_id: null });
    await ds.query(`UPDATE accounts.saml_domains SET verified_at = now() WHERE account_id = $1 AND domain = 'acme-labs.test'`, [accountId]);
  });

  it('refuses accounts without single sign-on', async () => {
    const { id } = await bus.request(AccountsSubjects.createAccount, {
      user_id: (await ds.query(`SELECT id FROM accounts.users LIMIT 1`))[0].id,
      body: { slug: 'plain' },
    });
    await expect(bus.request(AccountsSubjects.samlAcs, { account_id: id, saml_response: 'PHg+' })).rejects.toMatchObject(
      refused(/not configured/),
    );
    await expect(bus.request(AccountsSubjects.samlLogin, { account_id: id })).rejects.toMatchObject({ code: ErrorCodes.NOT_FOUND });
  });
});
