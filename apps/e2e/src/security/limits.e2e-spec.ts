import { Agent, request } from 'undici';
import { apiKey, type HttpClient } from '../support/http-client';
import { startDistributed, startStandalone, type Topology } from '../support/topologies';

interface Answer {
  status: number;
  body: { detail?: unknown; token?: string };
  headers: Record<string, string | string[] | undefined>;
}

const EDGE_BURST = 60;

interface SendOptions {
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}
type From = (source: string, method: string, path: string, options?: SendOptions) => Promise<Answer>;

/** Sends from a chosen loopback source address (one undici agent per address, bound to it). */
async function sendFrom(
  agents: Map<string, Agent>,
  http: HttpClient,
  source: string,
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<Answer> {
  let agent = agents.get(source);
  if (!agent) agents.set(source, (agent = new Agent({ localAddress: source })));
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const res = await request(`${http.baseUrl}${path}`, { method: method as 'POST', headers, body, dispatcher: agent });
  const text = await res.body.text();
  const json =
    (res.headers['content-type'] ?? '').toString().includes('json') && text ? (JSON.parse(text) as Answer['body']) : { detail: text };
  return { status: res.statusCode, body: json, headers: res.headers };
}

/** The attack of the issue: 50 failures on the admin's e-mail from 127.0.0.2; the admin signs in from 127.0.0.3. */
async function adminAttack(from: From, admin: { email: string; password: string }): Promise<void> {
  const signIn = (source: string, email: string, password: string) =>
    from(source, 'POST', '/api/v1/auth/login', { json: { email, password } });
  const statuses: number[] = [];
  let limited: Answer | undefined;
  for (let i = 0; i < 50; i++) {
    const res = await signIn('127.0.0.2', admin.email, `wrong password ${i}`);
    statuses.push(res.status);
    if (res.status === 429) limited ??= res;
  }
  expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  // Three free typos, then each failure doubles the wait: a handful of guesses at most in the time 50 requests take.
  expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
  expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(12);
  expect(limited?.body.detail).toEqual({
    message: expect.stringMatching(/Too many failed sign-in attempts/),
    try_after: expect.any(Number),
  });
  const tryAfter = (limited?.body.detail as { try_after: number }).try_after;
  expect(tryAfter).toBeGreaterThan(Date.now() / 1000 - 5);
  expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
  // Even the right password waits, from the attacker's address...
  const attackerRight = await signIn('127.0.0.2', admin.email, admin.password);
  expect(attackerRight.status).toBe(429);

  // ...but the admin, from their own address, signs in at once: over JSON and through the sign-in page.
  const owner = await signIn('127.0.0.3', admin.email, admin.password);
  expect(owner.status).toBe(200);
  expect(owner.body.token).toEqual(expect.any(String));
  const page = await from('127.0.0.3', 'POST', '/auth/login', { form: { email: admin.email, password: admin.password } });
  expect(page.status).toBe(200);
}

/**
 * Abuse limits, as the attacks. Every 127.0.0.0/8 address is this machine on Linux: binding the
 * client socket to 127.0.0.2, .3, … gives each "attacker" and the "owner" their own source address,
 * the one the gateway sees when no proxy is trusted (the default).
 */
describe('security: abuse limits', () => {
  let topology: Topology;
  let http: HttpClient;
  let admin: { email: string; password: string };
  let kbid: string;
  let key: ReturnType<typeof apiKey>;
  const agents = new Map<string, Agent>();

  beforeAll(async () => {
    // A slow refill: within the test a client's budget is its burst, whatever the machine's speed.
    topology = await startStandalone({ AUTH_RATE_LIMIT_BURST: String(EDGE_BURST), AUTH_RATE_LIMIT_PER_MINUTE: '1' });
    http = topology.http;
    const boot = topology.bootstrap();
    admin = { email: boot.user.email, password: boot.user.password };
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.close()));
    await topology?.stop();
  }, 60_000);

  const from = (source: string, method: string, path: string, options: SendOptions = {}) =>
    sendFrom(agents, http, source, method, path, options);
  const signIn = (source: string, email: string, password: string, headers?: Record<string, string>) =>
    from(source, 'POST', '/api/v1/auth/login', { json: { email, password }, headers });

  it('an attacker failing 50 times on the admin e-mail is slowed down (429 with try_after); the admin, from elsewhere, still signs in', async () => {
    await adminAttack(from, admin);
  });

  it('X-Forwarded-For is ignored unless TRUSTED_PROXIES names the peer: a forged header does not reset the count', async () => {
    for (let i = 0; i < 12; i++) await signIn('127.0.0.4', admin.email, 'wrong password');
    const forged = await signIn('127.0.0.4', admin.email, 'wrong password', { 'x-forwarded-for': '198.51.100.9' });
    expect(forged.status).toBe(429);
  });

  it('credential stuffing from one address (many e-mails) is slowed down per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await signIn('127.0.0.5', `user${i}@example.com`, 'some password')).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(30);
  });

  it('a per-address budget covers every public sign-in route: past it, 429 before any work', async () => {
    const routes = [
      () => from('127.0.0.6', 'POST', '/api/v1/auth/signup', { json: { email: 'x', password: 'y' } }),
      () => from('127.0.0.6', 'POST', '/auth/login', { form: { email: 'nobody@example.com', password: 'nope' } }),
      () => from('127.0.0.6', 'POST', '/api/v1/saml/nope/acs', { form: { SAMLResponse: 'x' } }),
      () => from('127.0.0.6', 'POST', '/auth/invite/login', { form: { token: 'x', email: 'nobody@example.com', password: 'nope' } }),
      // The router ignores case and a trailing slash: so does the budget.
      () => from('127.0.0.6', 'POST', '/API/V1/AUTH/LOGIN/', { json: { email: 'nobody@example.com', password: 'nope' } }),
    ];
    const answers: Answer[] = [];
    for (let i = 0; i < EDGE_BURST + 5; i++) answers.push(await routes[i % routes.length]!());
    expect(answers.slice(0, EDGE_BURST - 5).some((a) => a.status === 429 && JSON.stringify(a.body).includes('sign-in requests'))).toBe(
      false,
    );
    const edge = answers.slice(EDGE_BURST).filter((a) => a.status === 429);
    expect(edge).toHaveLength(answers.length - EDGE_BURST);
    expect(edge[0]?.body.detail).toEqual({
      message: expect.stringMatching(/Too many sign-in requests from this address/),
      try_after: expect.any(Number),
    });
    // Other addresses and the rest of the API are untouched.
    expect((await signIn('127.0.0.7', admin.email, admin.password)).status).toBe(200);
    expect((await from('127.0.0.6', 'GET', `/api/v1/kb/${kbid}/resources`, { headers: { [key.header]: key.value } })).status).toBe(200);
  });

  it('JSON bodies: 1 MB by default, the large limit only where content is sent', async () => {
    const big = 'x'.repeat(1_200_000);
    const search = await from('127.0.0.8', 'POST', `/api/v1/kb/${kbid}/search`, {
      json: { query: big },
      headers: { [key.header]: key.value },
    });
    expect(search.status).toBe(413);
    expect(search.body).toEqual({ detail: expect.stringMatching(/larger than the limit/) });
    const labelset = await from('127.0.0.8', 'POST', `/api/v1/kb/${kbid}/labelset/big`, {
      json: { title: big },
      headers: { [key.header]: key.value },
    });
    expect(labelset.status).toBe(413);
    const created = await from('127.0.0.8', 'POST', `/api/v1/kb/${kbid}/resources`, {
      json: { title: 'Big text', texts: { t: { body: big } } },
      headers: { [key.header]: key.value },
    });
    expect(created.status).toBe(201);
  });
});

// The counts live in the accounts database: on PostgreSQL and over NATS in this topology.
describe('security: abuse limits — distributed', () => {
  let topology: Topology;
  const agents = new Map<string, Agent>();

  beforeAll(async () => {
    topology = await startDistributed();
  }, 240_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.close()));
    await topology?.stop();
  }, 60_000);

  it('an attacker failing 50 times on the admin e-mail does not lock the admin out', async () => {
    const boot = topology.bootstrap();
    await adminAttack((source, method, path, options) => sendFrom(agents, topology.http, source, method, path, options), {
      email: boot.user.email,
      password: boot.user.password,
    });
  });
});
