import { randomBytes } from 'node:crypto';
import {
  buildSamlResponse,
  createTestIdp,
  readAuthnRequest,
  startFakeDnsServer,
  type FakeDnsServer,
  type TestIdp,
} from '@kb/platform/testing';
import { bearer, type HttpClient } from '../support/http-client';
import { startStandalone, type Topology } from '../support/topologies';

/**
 * Issue 16, "SSO can never sign in someone else": every test is an attack (or the path it must not
 * break) over HTTP against the standalone app. Anyone may sign up, create an account and configure
 * its SAML IdP (their own certificate, any domain, any NameID): that must never yield a token for a
 * user the IdP did not provision, nor a domain the account did not prove it controls.
 * The app asks a DNS server on loopback (DNS_SERVERS) for the domain-verification TXT records.
 */
const PASSWORD = 'correct horse battery staple';
const ADMIN_EMAIL = 'admin@victim.test';
const hex = () => randomBytes(4).toString('hex');

interface Actor {
  token: string;
  user_id: string;
  email: string;
  verify_url?: string;
}

describe('security: single sign-on never signs in someone else (standalone)', () => {
  jest.setTimeout(60_000);
  let topology: Topology;
  let http: HttpClient;
  let dns: FakeDnsServer;
  let attackerIdp: TestIdp;
  let corpIdp: TestIdp;

  beforeAll(async () => {
    dns = await startFakeDnsServer();
    [attackerIdp, corpIdp] = await Promise.all([
      createTestIdp('https://idp.attacker.test/metadata'),
      createTestIdp('https://idp.corp.test/metadata'),
    ]);
    topology = await startStandalone({ DNS_SERVERS: dns.server, ADMIN_EMAIL });
    http = topology.http;
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await dns?.close();
  });

  const signUp = async (email: string): Promise<Actor> => {
    const res = await http.call<{ token: string; user_id: string; email_verification: { verify_url?: string } }>(
      'POST',
      '/api/v1/auth/signup',
      { body: { email, password: PASSWORD } },
    );
    expect(res.status).toBe(201);
    return { token: res.body.token, user_id: res.body.user_id, email, verify_url: res.body.email_verification?.verify_url };
  };
  const createAccount = async (owner: Actor, slug: string): Promise<string> => {
    const res = await http.call<{ id: string }>('POST', '/api/v1/accounts', {
      credential: bearer(owner.token),
      body: { slug, title: slug },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const configureSaml = (owner: Actor, accountId: string, idp: TestIdp, domains: string[]) =>
    http.call<{ detail: string }>('PATCH', `/api/v1/account/${accountId}`, {
      credential: bearer(owner.token),
      body: {
        saml_config: {
          domains,
          sso_url: `https://${new URL(idp.entityId).host}/sso`,
          entity_id: idp.entityId,
          x509_cert: idp.cert,
          authn_context: 'exact',
        },
      },
    });
  type Domain = { domain: string; status: string; record: { name: string; value: string } };
  const domainsOf = async (owner: Actor, accountId: string) =>
    (await http.call<Domain[]>('GET', `/api/v1/account/${accountId}/saml/domains`, { credential: bearer(owner.token) })).body;
  /** Publishes the account's TXT record (as the domain's real owner would) and asks for verification. */
  const proveDomain = async (owner: Actor, accountId: string, domain: string) => {
    const claims = await domainsOf(owner, accountId);
    const claim = Array.isArray(claims) ? claims.find((d) => d.domain === domain) : undefined;
    if (claim) dns.addTxt(claim.record.name, claim.record.value);
    return http.call<Domain>('POST', `/api/v1/account/${accountId}/saml/domains/${domain}/verify`, { credential: bearer(owner.token) });
  };
  /** Starts SSO (GET …/login, or the link intent with a user's token) and returns the AuthnRequest id. */
  const startSso = async (accountId: string, linkAs?: Actor): Promise<string> => {
    if (linkAs) {
      const res = await http.call<{ redirect_url: string }>('POST', `/api/v1/saml/${accountId}/link`, { credential: bearer(linkAs.token) });
      expect(res.status).toBe(200);
      return readAuthnRequest(res.body.redirect_url).id;
    }
    const res = await fetch(`${http.baseUrl}/api/v1/saml/${accountId}/login`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return readAuthnRequest(res.headers.get('location') ?? '').id;
  };
  /** The IdP's answer (signed with `idp`'s key) naming `email`, posted to the ACS as a browser would. */
  const postAssertion = async (accountId: string, idp: TestIdp, email: string, linkAs?: Actor) => {
    const base = `${http.baseUrl}/api/v1/saml/${accountId}`;
    // The SP's URLs are built on PUBLIC_BASE_URL: read them from its metadata rather than guess.
    const metadata = (await http.call<string>('GET', `/api/v1/saml/${accountId}/metadata`)).body;
    const audience = /entityID="([^"]+)"/.exec(metadata)?.[1] ?? `${base}/metadata`;
    const acsUrl = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(metadata)?.[1] ?? `${base}/acs`;
    const samlResponse = buildSamlResponse(idp, { inResponseTo: await startSso(accountId, linkAs), email, acsUrl, audience });
    const res = await http.call<string>('POST', `/api/v1/saml/${accountId}/acs`, {
      body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    return { status: res.status, body: res.body, token: /<code id="token">([^<]+)<\/code>/.exec(res.body)?.[1] };
  };
  const me = (token: string) =>
    http.call<{ preferences: { email: string }; accounts: string[] }>('GET', '/api/v1/user', { credential: bearer(token) });
  const memberEmails = async (owner: Actor, accountId: string) =>
    (await http.call<{ email: string }[]>('GET', `/api/v1/account/${accountId}/users`, { credential: bearer(owner.token) })).body
      .map((u) => u.email)
      .sort();

  describe('the takeover sequence', () => {
    let attacker: Actor;
    let attackerAccount: string;
    let passwordUser: Actor;
    let otherMember: Actor;

    beforeAll(async () => {
      // Victims: the bootstrap administrator, a password user, and a member of another account, all at victim.test.
      passwordUser = await signUp(`pat-${hex()}@victim.test`);
      otherMember = await signUp(`mo-${hex()}@victim.test`);
      const boot = topology.bootstrap();
      const invited = await http.call<{ invite_url: string }>('POST', `/api/v1/account/${boot.account.slug}/invite`, {
        credential: bearer(boot.personal_access_token.token),
        body: { email: otherMember.email, role: 'AMEMBER' },
      });
      if (otherMember.verify_url) await http.call('GET', new URL(otherMember.verify_url).pathname + new URL(otherMember.verify_url).search);
      expect(
        (
          await http.call('POST', '/api/v1/invites/accept', {
            credential: bearer(otherMember.token),
            body: { token: new URL(invited.body.invite_url).searchParams.get('token') },
          })
        ).status,
      ).toBeLessThan(300);

      attacker = await signUp(`mallory-${hex()}@attacker.test`);
      attackerAccount = await createAccount(attacker, `evil-${hex()}`);
    });

    it('an IdP of an account that did not prove the domain signs nobody in: the forged assertions get 401 and no token', async () => {
      expect((await configureSaml(attacker, attackerAccount, attackerIdp, ['victim.test'])).status).toBe(200);
      for (const email of [ADMIN_EMAIL, passwordUser.email, otherMember.email, `nobody-${hex()}@victim.test`]) {
        const forged = await postAssertion(attackerAccount, attackerIdp, email);
        expect(forged.status).toBe(401);
        expect(forged.body).toContain('not verified');
        expect(forged.token).toBeUndefined();
      }
      // Discovery does not send victim.test's users to the attacker's IdP either.
      const page = await http.call<string>('POST', '/auth', {
        body: `email=${encodeURIComponent(ADMIN_EMAIL)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(page.body).toContain('id="password"');
      expect(page.body).not.toContain(`/api/v1/saml/${attackerAccount}/login`);
      expect(await memberEmails(attacker, attackerAccount)).toEqual([attacker.email]);
      expect((await domainsOf(attacker, attackerAccount)).map((d) => [d.domain, d.status])).toEqual([['victim.test', 'pending']]);
    });

    it('even with the domain verified, the IdP cannot sign in users it did not provision (administrator, password user, member of another account)', async () => {
      // Defence in depth: suppose the attacker does control victim.test's DNS.
      const proof = await proveDomain(attacker, attackerAccount, 'victim.test');
      for (const email of [ADMIN_EMAIL, passwordUser.email, otherMember.email]) {
        const forged = await postAssertion(attackerAccount, attackerIdp, email);
        expect(forged.status).toBe(401);
        expect(forged.body).toContain('did not create');
        expect(forged.token).toBeUndefined();
      }
      expect(proof.body.status).toBe('verified');
      expect(await memberEmails(attacker, attackerAccount)).toEqual([attacker.email]);
      // The administrator still has only their own account.
      const admin = topology.bootstrap();
      expect((await me(admin.personal_access_token.token)).body.accounts).toEqual([admin.account.slug]);
    });

    it("a link request is bound to the user who started it: answering it with the administrator's NameID links the attacker, not the administrator", async () => {
      const linked = await postAssertion(attackerAccount, attackerIdp, ADMIN_EMAIL, attacker);
      expect(linked.status).toBe(200);
      expect((await me(linked.token!)).body.preferences.email).toBe(attacker.email);
      // From now on that identity signs in the attacker, never the administrator.
      const again = await postAssertion(attackerAccount, attackerIdp, ADMIN_EMAIL);
      expect((await me(again.token!)).body.preferences.email).toBe(attacker.email);
      // Without a user credential there is no link intent at all.
      expect((await http.call('POST', `/api/v1/saml/${attackerAccount}/link`)).status).toBe(401);
    });
  });

  describe('a company that proves its domain', () => {
    let owner: Actor;
    let corpAccount: string;
    let corpSlug: string;
    let early: Actor;
    const domain = `corp-${hex()}.test`;

    beforeAll(async () => {
      // Signed up with a password before the company configured single sign-on, and never verified the address.
      early = await signUp(`early@${domain}`);
      owner = await signUp(`it-${hex()}@owner.test`);
      corpSlug = `corp-${hex()}`;
      corpAccount = await createAccount(owner, corpSlug);
      expect((await configureSaml(owner, corpAccount, corpIdp, [domain])).status).toBe(200);
    });

    it('signs in the users its IdP provisions once the domain is verified (discovery included)', async () => {
      const discover = () =>
        http.call<string>('POST', '/auth', {
          body: `email=new@${domain}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      expect((await discover()).body).toContain('id="password"');
      const before = await postAssertion(corpAccount, corpIdp, `new@${domain}`);
      expect(before.status).toBe(401);
      // Not published yet: the verification stays pending.
      expect(
        (
          await http.call<Domain>('POST', `/api/v1/account/${corpAccount}/saml/domains/${domain}/verify`, {
            credential: bearer(owner.token),
          })
        ).body.status,
      ).toBe('pending');
      expect((await proveDomain(owner, corpAccount, domain)).body.status).toBe('verified');
      expect((await discover()).body).toContain(`/api/v1/saml/${corpAccount}/login`);

      const first = await postAssertion(corpAccount, corpIdp, `new@${domain}`);
      expect(first.status).toBe(200);
      const profile = await me(first.token!);
      expect(profile.body.preferences.email).toBe(`new@${domain}`);
      expect(profile.body.accounts).toEqual([corpSlug]);
      const second = await postAssertion(corpAccount, corpIdp, `NEW@${domain}`);
      expect((await me(second.token!)).body.preferences.email).toBe(`new@${domain}`);
    });

    it('a second account cannot claim the verified domain (409), by saml_config or by a claim', async () => {
      const squatter = await signUp(`sq-${hex()}@squat.test`);
      const squatAccount = await createAccount(squatter, `squat-${hex()}`);
      const byConfig = await configureSaml(squatter, squatAccount, attackerIdp, [domain]);
      expect(byConfig.status).toBe(409);
      expect(byConfig.body.detail).toContain('already verified');
      const byClaim = await http.call<{ detail: string }>('POST', `/api/v1/account/${squatAccount}/saml/domains`, {
        credential: bearer(squatter.token),
        body: { domain },
      });
      expect(byClaim.status).toBe(409);
      expect(await domainsOf(squatter, squatAccount)).toEqual([]);
    });

    it('an unverified address is matched by neither SSO nor an invitation; once its owner verifies it, they can link and accept', async () => {
      const sso = await postAssertion(corpAccount, corpIdp, early.email);
      expect(sso.status).toBe(401);
      expect(sso.token).toBeUndefined();

      // The invitation link was handed to the inviter (no mail server): it proves nothing about the mailbox.
      const invite = await http.call<{ invite_url: string; sent: boolean }>('POST', `/api/v1/account/${corpAccount}/invite`, {
        credential: bearer(owner.token),
        body: { email: early.email, role: 'AMEMBER' },
      });
      expect(invite.body.sent).toBe(false);
      const inviteToken = new URL(invite.body.invite_url).searchParams.get('token');
      const refused = await http.call<{ detail: string }>('POST', '/api/v1/invites/accept', {
        credential: bearer(early.token),
        body: { token: inviteToken },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('Verify');
      expect(await memberEmails(owner, corpAccount)).not.toContain(early.email);

      const verified = await http.call<string>('GET', new URL(early.verify_url!).pathname + new URL(early.verify_url!).search);
      expect(verified.status).toBe(200);
      expect(
        (await http.call('POST', '/api/v1/invites/accept', { credential: bearer(early.token), body: { token: inviteToken } })).status,
      ).toBe(200);
      // Verified or not, SSO only signs in an existing user through an identity they linked themselves.
      expect((await postAssertion(corpAccount, corpIdp, early.email)).status).toBe(401);
      const linked = await postAssertion(corpAccount, corpIdp, early.email, early);
      expect((await me(linked.token!)).body.preferences.email).toBe(early.email);
      expect((await me((await postAssertion(corpAccount, corpIdp, early.email)).token!)).body.preferences.email).toBe(early.email);
    });
  });
});
