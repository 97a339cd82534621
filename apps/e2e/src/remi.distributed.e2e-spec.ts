import { apiKey, type HttpClient } from './support/http-client';
import { startDistributed, type Topology } from './support/topologies';
import { remiJudgeJourney } from './remi-judge-journey';

/**
 * The path of remi.e2e-spec.ts that differs between topologies: over NATS, with the per-app
 * permissions generated from the bus access table, the reporting service asks the understanding
 * service for the built-in model's vectors (`understanding.query.embed`) to score an answer.
 */
describe('REMi scores (distributed)', () => {
  let topology: Topology;
  let http: HttpClient;
  const month = new Date().toISOString().slice(0, 7);

  beforeAll(async () => {
    topology = await startDistributed({ reporting: { REMI_JUDGE: 'true' } });
    http = topology.http;
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('scores an answer with the built-in model over the bus, and refuses a bad query with 422', async () => {
    const boot = topology.bootstrap();
    const manager = apiKey(boot.api_key.token);
    const kb = boot.kb.id;
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/resources`, {
          credential: manager,
          body: { title: 'Storms', texts: { body: { body: 'A storm brings rain, wind and thunder over the sea.' } } },
        })
      ).status,
    ).toBe(201);
    await http.eventually(
      async () => {
        const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: manager,
        });
        return list.body.resources[0]?.metadata.status === 'PROCESSED' ? true : undefined;
      },
      120_000,
      'the resource processed',
    );
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/ask`, {
          credential: manager,
          headers: { 'x-synchronous': 'true' },
          body: { query: 'What does a storm bring?' },
        })
      ).status,
    ).toBe(200);
    const [scored] = await http.eventually(
      async () => {
        const r = await http.call<{ data: { id: number; remi: { groundedness: number[] } }[] }>('POST', `/api/v1/kb/${kb}/remi/query`, {
          credential: manager,
          body: { month },
        });
        return r.status === 200 && r.body.data.length > 0 ? r.body.data : undefined;
      },
      60_000,
      'the scored answer',
    );
    expect(scored?.remi.groundedness.length).toBeGreaterThan(0);
    const one = await http.call<{ scorer: string }>('GET', `/api/v1/kb/${kb}/remi/events/${scored?.id}`, { credential: manager });
    expect(one.body.scorer).toBe('offline:en-use-lite-2024');
    const bad = await http.call<{ detail: { loc: string[] }[] }>('POST', `/api/v1/kb/${kb}/remi/query`, {
      credential: manager,
      body: { month: '2026-13' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => d.loc.join('.'))).toEqual(['body.month']);
  });

  // Over NATS: reporting may call content.remi.judge, content calls the provider with the KB's key.
  it("grades a provider KB's answers by its own model over the bus", async () => {
    await remiJudgeJourney(topology, 'remi-judge-distributed');
  }, 240_000);
});
