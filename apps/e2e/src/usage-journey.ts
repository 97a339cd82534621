import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import type { Topology } from './support/topologies';

type Bucket = { timestamp: string; metrics: { name: string; value: number; details: unknown[] }[] };
type Totals = Record<string, number>;

/** Sum of each metric over the buckets. */
export const totalsOf = (buckets: Bucket[]): Totals => {
  const out: Totals = {};
  for (const b of buckets) for (const m of b.metrics) out[m.name] = (out[m.name] ?? 0) + m.value;
  return out;
};

export interface UsageJourneyContext {
  http: HttpClient;
  account: string;
  kb: string;
  kb2: string;
  manager: NonNullable<Credential>;
  manager2: NonNullable<Credential>;
  root: NonNullable<Credential>;
  startedAt: Date;
}

/** Bootstrap account with a second KB and a Manager key on it; the bootstrap user (ROOT) owns both. */
export async function usageSetup(topology: Topology): Promise<UsageJourneyContext> {
  const startedAt = new Date();
  const http = topology.http;
  const boot = topology.bootstrap();
  const root = bearer(boot.personal_access_token.token);
  const other = await http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
    credential: root,
    body: { slug: 'usage-second', title: 'second' },
  });
  expect(other.status).toBe(201);
  const kb2 = (other.body.uuid ?? other.body.id) as string;
  const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kb2}/service_accounts`, {
    credential: root,
    body: { title: 'second', role: 'SOWNER' },
  });
  const key = await http.call<{ token: string }>(
    'POST',
    `/api/v1/account/${boot.account.id}/kb/${kb2}/service_account/${sa.body.id}/keys`,
    {
      credential: root,
      body: { expires: new Date(Date.now() + 86_400_000).toISOString() },
    },
  );
  return {
    http,
    account: boot.account.id,
    kb: boot.kb.id,
    kb2,
    manager: apiKey(boot.api_key.token),
    manager2: apiKey(key.body.token),
    root,
    startedAt,
  };
}

/** The known workload: N resources, M searches (find and search), K answers, on the first KB; one resource and one search on the second. */
export const WORKLOAD = { resources: 3, searches: 3, answers: 2 };

export async function runWorkload(c: UsageJourneyContext): Promise<void> {
  const { http, kb, kb2, manager, manager2 } = c;
  const texts = [
    'A storm brings rain, wind and thunder over the sea.',
    'Cats sleep most of the day and hunt at night.',
    'Bread rises when yeast ferments the dough.',
  ];
  for (const [i, body] of texts.entries()) {
    expect(
      (await http.call('POST', `/api/v1/kb/${kb}/resources`, { credential: manager, body: { title: `r${i}`, texts: { body: { body } } } }))
        .status,
    ).toBe(201);
  }
  expect(
    (
      await http.call('POST', `/api/v1/kb/${kb2}/resources`, {
        credential: manager2,
        body: { title: 'second', texts: { body: { body: 'Owls hunt mice at night.' } } },
      })
    ).status,
  ).toBe(201);
  await http.eventually(
    async () => {
      const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
        credential: manager,
      });
      return list.body.resources.length === 3 && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
    },
    120_000,
    'the resources processed',
  );
  expect((await http.call('POST', `/api/v1/kb/${kb}/find`, { credential: manager, body: { query: 'storm rain' } })).status).toBe(200);
  expect((await http.call('GET', `/api/v1/kb/${kb}/find?query=cats`, { credential: manager })).status).toBe(200);
  expect((await http.call('POST', `/api/v1/kb/${kb}/search`, { credential: manager, body: { query: 'bread' } })).status).toBe(200);
  // Suggestions are not searches.
  expect((await http.call('GET', `/api/v1/kb/${kb}/suggest?query=sto`, { credential: manager })).status).toBe(200);
  for (const query of ['What does a storm bring?', 'When do cats hunt?']) {
    expect(
      (await http.call('POST', `/api/v1/kb/${kb}/ask`, { credential: manager, headers: { 'x-synchronous': 'true' }, body: { query } }))
        .status,
    ).toBe(200);
  }
  expect((await http.call('POST', `/api/v1/kb/${kb2}/find`, { credential: manager2, body: { query: 'owls' } })).status).toBe(200);
}

export function usagePath(c: UsageJourneyContext, query: Record<string, string>): string {
  return `/api/v1/account/${c.account}/usage?${new URLSearchParams(query).toString()}`;
}

/** Get Usage of the KB (or the account) until its totals are `expected` for the named metrics. */
export async function usageReaches(
  c: UsageJourneyContext,
  expected: Totals,
  query: Record<string, string>,
  what: string,
): Promise<Bucket[]> {
  return c.http.eventually(
    async () => {
      const res = await c.http.call<Bucket[]>('GET', usagePath(c, query), { credential: c.root });
      expect(res.status).toBe(200);
      const totals = totalsOf(res.body);
      return Object.entries(expected).every(([k, v]) => totals[k] === v) ? res.body : undefined;
    },
    60_000,
    what,
  );
}
