import { apiKey, type HttpClient } from './support/http-client';
import { startDistributed, type Topology } from './support/topologies';

/**
 * The paths of activity.e2e-spec.ts that differ between topologies: over NATS (with the per-app
 * permissions generated from the bus access table) the gateway streams the query from the
 * reporting service, and a refused query comes back as its 422 before any record.
 */
describe('activity log (distributed)', () => {
  let topology: Topology;
  let http: HttpClient;
  const month = new Date().toISOString().slice(0, 7);

  beforeAll(async () => {
    topology = await startDistributed();
    http = topology.http;
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('streams the records of a KB written with an API key, and refuses a bad query with 422', async () => {
    const boot = topology.bootstrap();
    const manager = apiKey(boot.api_key.token);
    const kb = boot.kb.id;
    for (const title of ['one', 'two', 'three']) {
      expect(
        (
          await http.call('POST', `/api/v1/kb/${kb}/resources`, {
            credential: manager,
            headers: { 'x-svcdb-user': 'end-user' },
            body: { title },
          })
        ).status,
      ).toBe(201);
    }
    const page = (body: Record<string, unknown>) =>
      fetch(`${http.baseUrl}/api/v1/kb/${kb}/activity/new/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [manager.header]: manager.value },
        body: JSON.stringify({ year_month: month, filters: { user_type: { eq: 'nuakey' } }, ...body }),
      });
    const records = await http.eventually(
      async () => {
        const res = await page({ show: ['user_id', 'user_type'], pagination: { limit: 2 } });
        const lines = (await res.text())
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        return lines.length === 2 && res.headers.get('has-more') === 'true' ? lines : undefined;
      },
      60_000,
      'the new events',
    );
    expect(records.map((r) => [r['user_id'], r['user_type']])).toEqual([
      ['end-user', 'nuakey'],
      ['end-user', 'nuakey'],
    ]);
    const bad = await page({ filters: { total_duration: { gt: 'slow' } } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: string[] }[] }).detail.map((d) => d.loc.join('.'))).toEqual([
      'body.filters.total_duration.gt',
    ]);
    expect((await http.call('GET', `/api/v1/kb/${kb}/activity/new/months`, { credential: manager })).body).toEqual({ downloads: [month] });
  });
});
