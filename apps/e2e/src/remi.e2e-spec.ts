import { apiKey, bearer, type Credential } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';
import { remiJudgeJourney } from './remi-judge-journey';

interface Remi {
  answer_relevance: { score: number; reason: string };
  context_relevance: number[];
  groundedness: number[];
}
interface QueryPage {
  data: { id: number; question: string; answer: string; remi: Remi }[];
  has_more: boolean;
}

/**
 * REMi scores through the gateway (spec 4.4, docs/remi.md): answers of `/ask` scored in the
 * background by the reporting service with the built-in model, then found by score, feedback and
 * status, aggregated over time and read one by one; managers only, and only of their KB.
 */
describe('REMi scores (standalone)', () => {
  let topology: Topology;
  let kb: string;
  let otherKb: string;
  let manager: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let pat: NonNullable<Credential>;
  const month = new Date().toISOString().slice(0, 7);
  const query = (body: unknown, credential: Credential = manager, kbid = kb) =>
    topology.http.call<QueryPage>('POST', `/api/v1/kb/${kbid}/remi/query`, { credential, body });

  beforeAll(async () => {
    topology = await startStandalone({ REMI_JUDGE: 'true' });
    const boot = topology.bootstrap();
    kb = boot.kb.id;
    manager = apiKey(boot.api_key.token);
    pat = bearer(boot.personal_access_token.token);
    const sa = await topology.http.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kb}/service_accounts`, {
      credential: pat,
      body: { title: 'reader', role: 'SMEMBER' },
    });
    const key = await topology.http.call<{ token: string }>(
      'POST',
      `/api/v1/account/${boot.account.id}/kb/${kb}/service_account/${sa.body.id}/keys`,
      {
        credential: pat,
        body: { expires: new Date(Date.now() + 86_400_000).toISOString() },
      },
    );
    reader = apiKey(key.body.token);
    const other = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: { slug: 'remi-other', title: 'other' },
    });
    otherKb = (other.body.uuid ?? other.body.id) as string;

    for (const [title, body] of [
      ['Storms', 'A storm brings rain, wind and thunder over the sea.'],
      ['Cats', 'Cats sleep most of the day and hunt at night.'],
    ]) {
      expect(
        (
          await topology.http.call('POST', `/api/v1/kb/${kb}/resources`, {
            credential: manager,
            body: { title, texts: { body: { body } } },
          })
        ).status,
      ).toBe(201);
    }
    await topology.http.eventually(
      async () => {
        const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: manager,
        });
        return list.body.resources.length === 2 && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      120_000,
      'both resources processed',
    );
    const ask = await topology.http.call<{ answer: string }>('POST', `/api/v1/kb/${kb}/ask`, {
      credential: manager,
      headers: { 'x-synchronous': 'true' },
      body: { query: 'What does a storm bring?' },
    });
    expect(ask.status).toBe(200);
    const learningId = ask.headers.get('x-svc-learning-id') as string;
    expect(
      (
        await topology.http.call('POST', `/api/v1/kb/${kb}/feedback`, {
          credential: manager,
          body: { ident: learningId, good: true, task: 'CHAT' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await topology.http.call('POST', `/api/v1/kb/${kb}/ask`, {
          credential: manager,
          headers: { 'x-synchronous': 'true' },
          body: { query: 'zzqx vvbn' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await topology.http.call('POST', `/api/v1/kb/${otherKb}/ask`, {
          credential: pat,
          headers: { 'x-synchronous': 'true' },
          body: { query: 'secret other question' },
        })
      ).status,
    ).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  const scored = (n: number, body: Record<string, unknown> = {}) =>
    topology.http.eventually(
      async () => {
        const r = await query({ month, pagination: { limit: 100 }, ...body });
        return r.status === 200 && r.body.data.length >= n ? r.body.data : undefined;
      },
      60_000,
      `${n} scored answers`,
    );

  it('scores every answer in the background, and finds them by score, feedback and status', async () => {
    const all = await scored(2);
    expect(all).toHaveLength(2);
    const storm = all.find((d) => d.question === 'What does a storm bring?');
    expect(storm?.answer).toMatch(/storm/i);
    // The extractive answer is taken from the context: grounded; the storm passage is relevant, the cats one less so.
    expect(storm?.remi.groundedness.length).toBeGreaterThan(0);
    expect(Math.min(...(storm?.remi.groundedness ?? []))).toBeGreaterThanOrEqual(4);
    expect(storm?.remi.answer_relevance).toEqual({ score: expect.any(Number), reason: expect.stringMatching(/\S/) });
    expect(storm?.remi.context_relevance.every((s) => Number.isInteger(s) && s >= 0 && s <= 5)).toBe(true);

    expect((await query({ month, feedback_good: true })).body.data.map((d) => d.id)).toEqual([storm?.id]);
    expect((await query({ month, feedback_good: false })).body.data).toEqual([]);
    expect((await query({ month, status: 'SUCCESS' })).body.data.map((d) => d.id)).toContain(storm?.id);
    const relevant = await query({ month, context_relevance: { value: 2, operation: 'ge', aggregation: 'max' } });
    expect(relevant.body.data.map((d) => d.id)).toContain(storm?.id);
    const page = await query({ month, pagination: { limit: 1 } });
    expect(page.body.has_more).toBe(true);
    const rest = await query({ month, pagination: { limit: 1, starting_after: page.body.data[0]?.id } });
    expect(rest.body).toMatchObject({ has_more: false, data: [{ id: all[1]?.id }] });
    expect((await query({ month: '2001-01' })).body).toEqual({ data: [], has_more: false });
    // The other KB's question is not among them.
    expect(JSON.stringify(all)).not.toContain('secret other question');
  });

  it('aggregates the scores over time and shows one request with its context', async () => {
    const all = await scored(2);
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const buckets = await topology.http.call<
      { timestamp: string; metrics: { name: string; min: number; max: number; average: number }[] }[]
    >('GET', `/api/v1/kb/${kb}/remi/scores?aggregation=month&from=${encodeURIComponent(from)}`, { credential: manager });
    expect(buckets.status).toBe(200);
    expect(buckets.body).toEqual([{ timestamp: `${month}-01T00:00:00.000Z`, metrics: expect.any(Array) }]);
    expect(buckets.body[0]?.metrics.map((m) => m.name)).toEqual(['answer_relevance', 'context_relevance', 'groundedness']);
    const ar = buckets.body[0]?.metrics[0];
    expect(ar?.max).toBe(Math.max(...all.map((d) => d.remi.answer_relevance.score)));
    expect(ar?.min).toBe(Math.min(...all.map((d) => d.remi.answer_relevance.score)));

    const storm = all.find((d) => d.question === 'What does a storm bring?');
    const one = await topology.http.call<Record<string, unknown> & { context: { key: string; text: string; context_relevance: number }[] }>(
      'GET',
      `/api/v1/kb/${kb}/remi/events/${storm?.id}`,
      { credential: manager },
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: storm?.id,
      status: 'SUCCESS',
      question: 'What does a storm bring?',
      answer: storm?.answer,
      model: 'extractive',
      remi: storm?.remi,
      feedback: { good: true },
      scorer: 'offline:en-use-lite-2024',
    });
    expect(one.body.context.map((c) => c.context_relevance)).toEqual(storm?.remi.context_relevance);
    expect(one.body.context.some((c) => c.text.includes('storm brings rain'))).toBe(true);
  });

  it("is for the KB's managers, and only of their KB", async () => {
    const [first] = await scored(1);
    expect((await query({ month }, reader)).status).toBe(403);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/remi/scores?from=2026-01-01T00:00:00Z`, { credential: reader })).status).toBe(
      403,
    );
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/remi/events/${first?.id}`, { credential: reader })).status).toBe(403);
    expect((await query({ month }, null)).status).toBe(401);
    expect((await query({ month }, manager, otherKb)).status).toBe(403);
    // The owner of both KBs cannot read this KB's request through the other KB.
    expect((await topology.http.call('GET', `/api/v1/kb/${otherKb}/remi/events/${first?.id}`, { credential: pat })).status).toBe(404);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/remi/events/999999999`, { credential: manager })).status).toBe(404);
  });

  it("grades a provider KB's answers by its own model, and scores offline when the judge's answer is unusable", async () => {
    await remiJudgeJourney(topology, 'remi-judge');
  }, 240_000);

  it('refuses bad requests with 422, listing every invalid member', async () => {
    const bad = await topology.http.call<{ detail: { loc: (string | number)[]; type: string }[] }>('POST', `/api/v1/kb/${kb}/remi/query`, {
      credential: manager,
      body: {
        context_relevance: { value: 'high', operation: 'like', aggregation: 'median' },
        feedback_good: 'yes',
        status: 'FINE',
        pagination: { limit: 500 },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => d.loc.join('.'))).toEqual([
      'body.month',
      'body.context_relevance.value',
      'body.context_relevance.operation',
      'body.context_relevance.aggregation',
      'body.feedback_good',
      'body.status',
      'body.pagination.limit',
    ]);
    const scores = (qs: string) =>
      topology.http.call<{ detail: { loc: string[] }[] }>('GET', `/api/v1/kb/${kb}/remi/scores?${qs}`, { credential: manager });
    expect((await scores('aggregation=day')).body.detail.map((d) => d.loc.join('.'))).toEqual(['query.from']);
    expect((await scores('aggregation=fortnight&from=2026-01-01T00:00:00Z')).status).toBe(422);
    expect((await scores('from=yesterday')).status).toBe(422);
    // More than 1000 buckets.
    expect((await scores('aggregation=hour&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(422);
    expect((await scores('from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(422);
  });
});
