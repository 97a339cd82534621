import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  createTestIdp,
  startFakeDnsServer,
  startTestIdpServer,
  type FakeDnsServer,
  type TestIdp,
  type TestIdpServer,
} from '@kb/platform/testing';
import { bearer } from './support/http-client';
import { REPO_ROOT } from './support/processes';
import { startStandalone, type Topology } from './support/topologies';

/** Debian's chromium (DEPENDENCIES.md): never a downloaded browser. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const PASSWORD = 'correct horse battery staple';
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

describe('the sign-in page in a browser (standalone)', () => {
  jest.setTimeout(60_000);
  let topology: Topology;
  let profileDir: string;
  let browser: BrowserContext;
  let page: Page;
  let idp: TestIdp;
  let idpServer: TestIdpServer;
  let dns: FakeDnsServer;
  let ssoEmail = '';

  beforeAll(async () => {
    profileDir = mkdtempSync(join(tmpdir(), 'kb-chromium-'));
    idp = await createTestIdp('https://idp.e2e.test/metadata');
    // SSO domains count once proven by a DNS TXT record: the app asks this server on loopback.
    dns = await startFakeDnsServer();
    [topology, browser, idpServer] = await Promise.all([
      startStandalone({ DNS_SERVERS: dns.server }),
      chromium.launchPersistentContext(profileDir, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS }),
      startTestIdpServer(idp, () => ssoEmail),
    ]);
    page = browser.pages()[0] ?? (await browser.newPage());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await idpServer?.close();
    await topology?.stop();
    await dns?.close();
    rmSync(profileDir, { recursive: true, force: true });
  });

  const url = (path: string) => `${topology.http.baseUrl}${path}`;
  const enterEmail = async (email: string) => {
    await page.goto(url('/auth'));
    await page.fill('#email', email);
    await page.click('button[type=submit]');
    // The next step: password, single sign-on, or the e-mail step again with an error.
    await page.waitForSelector('#password, #sso, [role=alert]');
  };
  const shownToken = async () => (await page.locator('#token').textContent({ timeout: 15_000 }))?.trim() ?? '';

  it('renders the sign-in page (screenshot in tmp/)', async () => {
    await page.goto(url('/auth'));
    expect(await page.title()).toContain('Sign in');
    await expect(page.locator('#email').isVisible()).resolves.toBe(true);
    mkdirSync(join(REPO_ROOT, 'tmp'), { recursive: true });
    await page.screenshot({ path: join(REPO_ROOT, 'tmp', 'auth-page-sign-in.png') });
  });

  it('signs up through the page: e-mail, "Create an account instead", the form, then the token', async () => {
    const email = `${unique('new')}@example.com`;
    await enterEmail(email);
    await expect(page.locator('#password').isVisible()).resolves.toBe(true);
    await page.click('text=Create an account instead');
    await page.locator('h1', { hasText: 'Create an account' }).waitFor();
    await expect(page.inputValue('#email')).resolves.toBe(email);
    await page.fill('#name', 'New User');
    await page.fill('#password', PASSWORD);
    await page.click('text=Create account');
    expect(await shownToken()).toMatch(/\S{20,}/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Signed in');
  });

  it('signs in with the password, and the token works on GET /api/v1/user', async () => {
    const email = `${unique('ada')}@example.com`;
    expect((await topology.http.call('POST', '/api/v1/auth/signup', { body: { email, password: PASSWORD } })).status).toBe(201);
    await enterEmail(email);
    await page.fill('#password', PASSWORD);
    await page.click('button:has-text("Sign in")');
    const token = await shownToken();
    const me = await topology.http.call<{ preferences: { email: string } }>('GET', '/api/v1/user', { credential: bearer(token) });
    expect(me.status).toBe(200);
    expect(me.body.preferences.email).toBe(email);
  });

  it('shows the error for a wrong password', async () => {
    const email = `${unique('bob')}@example.com`;
    await topology.http.call('POST', '/api/v1/auth/signup', { body: { email, password: PASSWORD } });
    await enterEmail(email);
    await page.fill('#password', 'not the password at all');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/auth/login')),
      page.click('button:has-text("Sign in")'),
    ]);
    expect(response.status()).toBe(401);
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain('Wrong e-mail address or password');
    await expect(page.locator('#token').count()).resolves.toBe(0);
  });

  it('signs in through single sign-on: e-mail, the IdP round trip (redirect, auto-posted response), the token page', async () => {
    const boot = topology.bootstrap();
    const domain = `${unique('sso')}.test`;
    const configured = await topology.http.call('PATCH', `/api/v1/account/${boot.account.slug}`, {
      credential: bearer(boot.personal_access_token.token),
      body: {
        saml_config: { domains: [domain], sso_url: idpServer.ssoUrl, entity_id: idp.entityId, x509_cert: idp.cert, authn_context: 'exact' },
      },
    });
    expect(configured.status).toBeLessThan(300);
    // The account proves it controls the domain: its TXT record published, then verified.
    const claims = await topology.http.call<{ domain: string; record: { name: string; value: string } }[]>(
      'GET',
      `/api/v1/account/${boot.account.slug}/saml/domains`,
      {
        credential: bearer(boot.personal_access_token.token),
      },
    );
    const claim = claims.body.find((c) => c.domain === domain)!;
    dns.addTxt(claim.record.name, claim.record.value);
    const verified = await topology.http.call<{ status: string }>(
      'POST',
      `/api/v1/account/${boot.account.slug}/saml/domains/${domain}/verify`,
      {
        credential: bearer(boot.personal_access_token.token),
      },
    );
    expect(verified.body.status).toBe('verified');
    ssoEmail = `jo@${domain}`;

    await enterEmail(ssoEmail.toUpperCase());
    await expect(page.locator('h1').textContent()).resolves.toBe('Single sign-on');
    await expect(page.locator('#sso').getAttribute('href')).resolves.toBe(`/api/v1/saml/${boot.account.id}/login`);
    await page.click('#sso');
    const token = await shownToken();
    expect(page.url()).toMatch(new RegExp(`/api/v1/saml/${boot.account.id}/acs$`));
    expect(idpServer.requests).toHaveLength(1);
    const me = await topology.http.call<{ preferences: { email: string }; accounts: string[] }>('GET', '/api/v1/user', {
      credential: bearer(token),
    });
    expect(me.body.preferences.email).toBe(ssoEmail);
    expect(me.body.accounts).toContain(boot.account.slug);

    // The same response posted again (as a replay would) is refused with a 401 page naming the check.
    const again = await topology.http.call<string>('POST', `/api/v1/saml/${boot.account.id}/acs`, {
      body: new URLSearchParams({ SAMLResponse: idpServer.responses[0] ?? '' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(again.status).toBe(401);
    expect(again.body).toContain('replay');
  });
});
