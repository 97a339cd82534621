import { apiKey, bearer, HttpClient, type Credential } from './support/http-client';
import { PROXY_ERROR_HEADER, RoundRobinProxy } from './support/round-robin-proxy';
import { startDistributed, type Deployment } from './support/topologies';
import { totalsOf } from './usage-journey';

type Outcome = { kind: 'create' | 'find'; slug?: string; status: number; proxyError: string | null; started: number; ended: number };
type Window = { instance: string; from: number; to: number; exitCode: number | null | undefined };
type Row = Record<string, unknown>;
type Bucket = { timestamp: string; metrics: { name: string; value: number; details: unknown[] }[] };

const WRITERS = 3;
const SEARCHERS = 2;
/** Pause of each writer between creations: ~6 resources/s in all, below what two workers process on a busy 2-core machine. */
const WRITE_PAUSE_MS = 400;
const SEARCH_PAUSE_MS = 150;
/** The order of a rolling restart: the edge first, then the services, each back before the next goes. */
const ORDER = ['gateway-1', 'gateway-2', 'accounts', 'content', 'understanding-1', 'understanding-2', 'reporting'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (i: number) =>
  `Load document ${i} describes harbour number ${i} and the boats it shelters.\n\nThe tide at harbour ${i} turns twice a day.`;

/**
 * A deployment as operations run it (issue 22 item 4): two gateway processes behind a round-robin
 * proxy, two understanding processes sharing the processing queue, one accounts, content and
 * reporting process, NATS with per-app credentials. Under a steady load of resource creations and
 * searches, every app is restarted one by one (SIGTERM, exit, start, ready). Then:
 *
 * - 5xx: the only ones allowed are the proxy's own 502 (marked `x-proxy-upstream-error`) for a
 *   non-idempotent request whose connection to a gateway broke while that gateway was restarting
 *   (its outcome is unknown to the client, as behind any load balancer). The proxy sends again a
 *   request refused at connect (it never reached a gateway) and an idempotent one (the searches)
 *   that broke. Any 5xx a gateway answered — a live one — fails the test.
 * - every resource in the KB is one the load created, each processed exactly once: one job record,
 *   completed; its two paragraphs stored once; one "processing job done" line in the logs of the
 *   understanding processes for its job (a job done twice would log twice, whichever process);
 * - both understanding processes did work;
 * - reporting has exactly one `new` and one `processed` event per resource (none lost, none
 *   doubled), all sealed, and Get Usage counts exactly that many processed documents.
 */
describe('rolling restart of a deployment under load (distributed)', () => {
  let deployment: Deployment;
  let proxy: RoundRobinProxy;
  let http: HttpClient;

  beforeAll(async () => {
    // Info logs of the understanding processes: one line per job done, to count them. A stopping
    // worker hands its running jobs back at once (nak), so restarts do not wait on the ack wait; 10 s
    // instead of the topology's 3 s (for its crash tests) keeps a scheduling stall of a loaded
    // 2-core machine from handing a live job to the other worker (production: 30 s).
    deployment = await startDistributed(
      { understanding: { LOG_LEVEL: 'info', PROCESSING_ACK_WAIT_MS: '10000' } },
      { gateway: 2, understanding: 2 },
    );
    proxy = new RoundRobinProxy(deployment.gatewayUrls());
    http = new HttpClient(await proxy.listen());
  }, 300_000);

  afterAll(async () => {
    await proxy?.close();
    await deployment?.stop();
  }, 120_000);

  it('loses no request, job or event while every app restarts one by one', async () => {
    const started = Date.now();
    const boot = deployment.bootstrap();
    const kb = boot.kb.id;
    const key: NonNullable<Credential> = apiKey(boot.api_key.token);
    const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    expect(deployment.instances().sort()).toEqual([...ORDER].sort());

    // The load: writers create text resources, searchers search, all through the proxy.
    const outcomes: Outcome[] = [];
    let running = true;
    let next = 0;
    const timed = async (kind: Outcome['kind'], slug: string | undefined, call: () => Promise<Response>) => {
      const t0 = Date.now();
      try {
        const res = await call();
        await res.arrayBuffer();
        outcomes.push({ kind, slug, status: res.status, proxyError: res.headers.get(PROXY_ERROR_HEADER), started: t0, ended: Date.now() });
      } catch (err) {
        // The proxy itself never goes away: a failed fetch is a test failure, kept as status 0.
        outcomes.push({ kind, slug, status: 0, proxyError: String(err), started: t0, ended: Date.now() });
      }
    };
    const writer = async () => {
      while (running) {
        const i = next++;
        await timed('create', `load-${i}`, () =>
          fetch(`${http.baseUrl}/api/v1/kb/${kb}/resources`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', [key.header]: key.value },
            body: JSON.stringify({ title: `Load ${i}`, slug: `load-${i}`, texts: { body: { body: text(i), format: 'PLAIN' } } }),
          }),
        );
        await sleep(WRITE_PAUSE_MS);
      }
    };
    const searcher = async (n: number) => {
      while (running) {
        const query = new URLSearchParams({ query: `harbour ${n} tide` });
        await timed('find', undefined, () =>
          fetch(`${http.baseUrl}/api/v1/kb/${kb}/find?${query}`, { headers: { [key.header]: key.value } }),
        );
        await sleep(SEARCH_PAUSE_MS);
      }
    };
    const load = [...Array.from({ length: WRITERS }, () => writer()), ...Array.from({ length: SEARCHERS }, (_, n) => searcher(n))];

    // The rolling restart, each app back (ready) before the next goes, with load on the full deployment in between.
    const windows: Window[] = [];
    await sleep(3_000);
    for (const instance of ORDER) {
      const window: Window = { instance, from: Date.now(), to: 0, exitCode: undefined };
      window.exitCode = await deployment.restart(instance);
      window.to = Date.now();
      windows.push(window);
      await sleep(2_000);
    }
    running = false;
    await Promise.all(load);
    const restartedAt = Date.now();

    // Every app stopped cleanly (exit 0: nothing cut at the grace limit).
    expect(windows.map((w) => [w.instance, w.exitCode])).toEqual(ORDER.map((i) => [i, 0]));

    // No 5xx but the proxy's own, for a request on a gateway that was restarting; nothing else unexpected.
    const restarting = (o: Outcome) =>
      windows.some((w) => w.instance.startsWith('gateway') && o.started <= w.to && o.ended >= w.from && o.proxyError !== null);
    const during = (o: Outcome) => windows.find((w) => o.started <= w.to && o.ended >= w.from)?.instance ?? 'no restart';
    const unexpected = outcomes.filter((o) => (o.kind === 'create' ? o.status !== 201 : o.status !== 200) && !restarting(o));
    // Counted by kind, status and the restart under way, e.g. "create 503 while content restarted: 12".
    const summary: Record<string, number> = {};
    for (const o of unexpected) {
      const what = `${o.kind} ${o.status}${o.proxyError ? ` (proxy: ${o.proxyError})` : ''} while ${during(o)} restarted`;
      summary[what] = (summary[what] ?? 0) + 1;
    }
    expect(summary).toEqual({});
    const creates = outcomes.filter((o) => o.kind === 'create');
    expect(creates.length).toBeGreaterThan(50);
    expect(outcomes.filter((o) => o.kind === 'find' && o.status === 200).length).toBeGreaterThan(50);

    // The KB holds every created resource, and only resources the load asked for (an unknown-outcome create may or may not be there).
    const resources = await listResources(http, kb, key);
    const slugs = new Set(resources.map((r) => r.slug));
    for (const o of creates.filter((c) => c.status === 201)) expect(slugs.has(o.slug as string)).toBe(true);
    const asked = new Set(creates.map((c) => c.slug));
    expect(resources.filter((r) => !asked.has(r.slug))).toEqual([]);
    const n = resources.length;

    // Each processed exactly once.
    await http.eventually(
      async () => {
        const now = await listResources(http, kb, key);
        return now.length === n && now.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      240_000,
      `all ${n} resources processed`,
    );
    const jobs = await processingJobs(http, kb, key);
    const byResource = new Map<string, Row[]>();
    for (const j of jobs) byResource.set(String(j['resource_id']), [...(byResource.get(String(j['resource_id'])) ?? []), j]);
    for (const r of resources) {
      expect([r.slug, (byResource.get(r.id) ?? []).map((j) => [j['completed'], j['failed']])]).toEqual([r.slug, [[true, false]]]);
    }
    const paragraphs = await Promise.all(resources.map((r) => paragraphCount(http, kb, r.id, key)));
    expect(paragraphs.filter((p) => p !== 2)).toEqual([]);

    // Each job done once, by one of the two workers, and both worked.
    const done = await http.eventually(
      async () => {
        const lines = ['understanding-1', 'understanding-2'].map((u) => jobsDone(deployment.log(u)));
        return lines.flat().length >= n ? lines : undefined;
      },
      10_000,
      'the job lines of the understanding logs',
    );
    const perJob = new Map<string, number>();
    for (const line of done.flat()) perJob.set(line.processing_id, (perJob.get(line.processing_id) ?? 0) + 1);
    expect([...perJob.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect(new Set(done.flat().map((l) => l.rid))).toEqual(new Set(resources.map((r) => r.id)));
    // Both busy: each took a fair share of the queue (about half when both run; 10 % is the floor).
    expect(done.map((d) => d.length >= n * 0.1)).toEqual([true, true]);

    // Reporting: one `new` and one `processed` event per resource, all sealed (hence counted once).
    const manager = key;
    await http.eventually(
      async () => {
        for (const type of ['new', 'processed']) {
          const r = await http.call<{ verified: number; unsealed: number; broken: unknown }>(
            'GET',
            `/api/v1/kb/${kb}/activity/${type}/verify`,
            { credential: manager },
          );
          if (r.status !== 200 || r.body.broken !== null || r.body.unsealed !== 0 || r.body.verified < n) return undefined;
        }
        return true;
      },
      120_000,
      'every event stored and sealed',
    );
    for (const type of ['new', 'processed']) {
      const events = await activity(http, kb, type, manager, started);
      const perResource = new Map<string, number>();
      for (const e of events) perResource.set(String(e['resource_id']), (perResource.get(String(e['resource_id'])) ?? 0) + 1);
      expect([type, [...perResource.entries()].filter(([, c]) => c !== 1)]).toEqual([type, []]);
      expect([type, new Set(perResource.keys())]).toEqual([type, new Set(resources.map((r) => r.id))]);
    }
    const usage = await http.call<Bucket[]>(
      'GET',
      `/api/v1/account/${boot.account.id}/usage?${new URLSearchParams({ knowledgebox: kb, from, aggregation: 'hour' }).toString()}`,
      { credential: bearer(boot.personal_access_token.token) },
    );
    expect(usage.status).toBe(200);
    expect(totalsOf(usage.body)).toMatchObject({ resources: n, docs_no_media_processed: n });

    // What the run did, for the report (jest prints it with --verbose).
    console.log(
      JSON.stringify({
        resources: n,
        creates: creates.length,
        finds: outcomes.length - creates.length,
        proxy_502: proxy.failures.map((f) => `${f.method} ${f.code}`),
        proxy_retried: proxy.retried,
        jobs_per_worker: done.map((d) => d.length),
        restart_ms: Object.fromEntries(windows.map((w) => [w.instance, w.to - w.from])),
        load_ms: restartedAt - started,
        total_ms: Date.now() - started,
      }),
    );
  }, 900_000);
});

type Listed = { id: string; slug: string; metadata: { status: string } };

async function listResources(http: HttpClient, kb: string, key: Credential): Promise<Listed[]> {
  const out: Listed[] = [];
  for (let page = 0; ; page++) {
    const res = await http.call<{ resources: Listed[]; pagination: { last: boolean } }>(
      'GET',
      `/api/v1/kb/${kb}/resources?page=${page}&size=100`,
      { credential: key },
    );
    expect(res.status).toBe(200);
    out.push(...res.body.resources);
    if (res.body.pagination.last) return out;
  }
}

async function processingJobs(http: HttpClient, kb: string, key: Credential): Promise<Row[]> {
  const out: Row[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: { results: Row[]; cursor: string | null } } = await http.call(
      'GET',
      `/api/v1/kb/${kb}/processing-status?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { credential: key },
    );
    expect(res.status).toBe(200);
    out.push(...res.body.results);
    cursor = res.body.cursor;
  } while (cursor);
  return out;
}

async function paragraphCount(http: HttpClient, kb: string, rid: string, key: Credential): Promise<number> {
  const res = await http.call<{ data: { texts: { body: { extracted: { metadata: { metadata: { paragraphs: unknown[] } } } } } } }>(
    'GET',
    `/api/v1/kb/${kb}/resource/${rid}?show=extracted&extracted=metadata`,
    { credential: key },
  );
  expect(res.status).toBe(200);
  return res.body.data.texts.body.extracted.metadata.metadata.paragraphs.length;
}

/** The "processing job done" lines of one understanding process's log (JSON lines, across its restarts). */
function jobsDone(log: string): { processing_id: string; rid: string }[] {
  return log
    .split('\n')
    .filter((l) => l.includes('"processing job done"'))
    .map((l) => JSON.parse(l) as { processing_id: string; rid: string });
}

/** Every event of a type since `since` (all months it spans), paged by id. */
async function activity(http: HttpClient, kb: string, type: string, key: Credential, since: number): Promise<Row[]> {
  const months = [...new Set([since, Date.now()].map((t) => new Date(t).toISOString().slice(0, 7)))];
  const out: Row[] = [];
  for (const month of months) {
    let after = 0;
    for (;;) {
      const res = await fetch(`${http.baseUrl}/api/v1/kb/${kb}/activity/${type}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { [key.header]: key.value } : {}) },
        body: JSON.stringify({
          year_month: month,
          show: ['id', 'resource_id', 'audit_metadata'],
          filters: { id: { gt: after } },
          pagination: { limit: 500 },
        }),
      });
      expect(res.status).toBe(200);
      const rows = (await res.text())
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Row);
      out.push(...rows);
      if (res.headers.get('has-more') !== 'true' || rows.length === 0) break;
      after = Math.max(...rows.map((r) => Number(r['id'])));
    }
  }
  return out;
}
