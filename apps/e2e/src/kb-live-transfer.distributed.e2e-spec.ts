import { bearer, HttpClient, type Credential } from './support/http-client';
import { NotificationStream, of } from './support/notification-stream';
import { startDistributed, type Deployment } from './support/topologies';

type FindBody = {
  best_matches: string[];
  resources: Record<
    string,
    { slug?: string; fields: Record<string, { paragraphs: Record<string, { id: string; score: number; order: number }> }> }
  >;
};
type Status = { status: string; total: number; processed: number };

/**
 * Live notifications and export/import in the distributed topology, with two gateway replicas:
 * a reader connected to gateway 1 sees a resource written through gateway 2 go created →
 * processed → indexed (the events cross processes on the bus, each replica subscribed to its
 * readers' KBs only) and nothing of another KB; a KB exported through one gateway and imported
 * through the other answers /find as the original does. One topology for both.
 */
describe('KB notifications and export/import across gateway replicas (distributed)', () => {
  let deployment: Deployment;
  let one: HttpClient;
  let two: HttpClient;
  let pat: NonNullable<Credential>;
  let kbA: string;
  let kbB: string;
  const streams: NotificationStream[] = [];
  const run = Date.now().toString(36);

  const create = async (http: HttpClient, kb: string, slug: string, body: string) => {
    const res = await http.call<{ uuid: string; seqid: number }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { slug, title: slug, texts: { body: { body } } },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const waitFor = (http: HttpClient, path: string) =>
    http.eventually(
      async () => {
        const s = await http.call<Status>('GET', path, { credential: pat });
        return s.body.status === 'finished' || s.body.status === 'errored' ? s.body : undefined;
      },
      180_000,
      path,
    );

  beforeAll(async () => {
    deployment = await startDistributed({}, { gateway: 2 });
    const [first, second] = deployment.gatewayUrls();
    one = new HttpClient(first as string);
    two = new HttpClient(second as string);
    const boot = deployment.bootstrap();
    pat = bearer(boot.personal_access_token.token);
    const newKb = async (slug: string) =>
      (await two.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, { credential: pat, body: { slug } })).body.id;
    kbA = await newKb(`live-a-${run}`);
    kbB = await newKb(`live-b-${run}`);
  }, 300_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    await deployment?.stop();
  }, 120_000);

  it("a reader on gateway 1 sees its KB's resource written through gateway 2 go created → processed → indexed, and nothing of another KB", async () => {
    const a = await NotificationStream.open(one, kbA, pat);
    const b = await NotificationStream.open(one, kbB, pat);
    streams.push(a, b);
    expect([a.status, b.status]).toEqual([200, 200]);
    const resA = await create(two, kbA, 'glaciers', 'Glaciers carve deep valleys into the mountains as the ice moves.');
    const resB = await create(two, kbB, 'other', 'A resource of another Knowledge Box.');
    await a.until((seen) => of(resA.uuid)(seen).includes('resource_indexed'), 'A indexed', 120_000);
    await b.until((seen) => of(resB.uuid)(seen).includes('resource_indexed'), 'B indexed', 120_000);
    expect(of(resA.uuid)(a.seen)).toEqual(['resource_written', 'resource_processed', 'resource_indexed']);
    expect(a.seen.find((n) => n.type === 'resource_written')?.data).toEqual({
      resource_uuid: resA.uuid,
      resource_title: 'glaciers',
      seqid: resA.seqid,
      operation: 'created',
      error: false,
    });
    expect(of(resB.uuid)(a.seen)).toEqual([]);
    expect(of(resA.uuid)(b.seen)).toEqual([]);
    expect(a.seen.every((n) => n.type === 'heartbeat' || n.data['resource_uuid'] === resA.uuid)).toBe(true);
  }, 240_000);

  it('exports a KB through one gateway and imports it through the other: the copy answers /find as the original does', async () => {
    await create(two, kbA, 'rivers', 'Rivers carry sediment down to the sea and build deltas.');
    await create(one, kbA, 'moon', 'The moon pulls the oceans and makes the tides rise and fall.');
    await one.eventually(
      async () => {
        const list = await one.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kbA}/resources`, {
          credential: pat,
        });
        return list.body.resources.length === 3 && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      120_000,
      'three processed resources',
    );
    const started = await two.call<{ export_id: string }>('POST', `/api/v1/kb/${kbA}/export`, { credential: pat });
    expect(started.status).toBe(200);
    expect(await waitFor(one, `/api/v1/kb/${kbA}/export/${started.body.export_id}/status`)).toMatchObject({
      status: 'finished',
      total: 3,
      processed: 3,
    });
    const download = await fetch(`${one.baseUrl}/api/v1/kb/${kbA}/export/${started.body.export_id}`, {
      headers: { [pat.header]: pat.value },
    });
    expect(download.status).toBe(200);
    const archive = Buffer.from(await download.arrayBuffer());
    const imported = await fetch(`${two.baseUrl}/api/v1/kbs/import`, {
      method: 'POST',
      headers: { [pat.header]: pat.value, 'content-type': 'binary/octet-stream' },
      body: archive,
    });
    expect(imported.status).toBe(200);
    const { kbid: copy, import_id: importId } = (await imported.json()) as { kbid: string; import_id: string };
    expect(await waitFor(one, `/api/v1/kb/${copy}/import/${importId}/status`)).toMatchObject({
      status: 'finished',
      total: 3,
      processed: 3,
    });

    // The same paragraphs, scores and order, ids compared by slug.
    const normalised = (body: FindBody) => {
      const slugOf = new Map(Object.entries(body.resources).map(([rid, r]) => [rid, r.slug ?? rid]));
      const swap = (id: string) => id.replace(/^[0-9a-f-]{36}/, (rid) => slugOf.get(rid) ?? rid);
      const paragraphs = Object.values(body.resources).flatMap((r) => Object.values(r.fields).flatMap((f) => Object.values(f.paragraphs)));
      return {
        best: body.best_matches.map(swap),
        paragraphs: paragraphs.map((p) => ({ ...p, id: swap(p.id), score: Number(p.score.toFixed(6)) })).sort((x, y) => x.order - y.order),
      };
    };
    for (const features of [['keyword'], ['keyword', 'semantic']]) {
      for (const query of ['ice valleys', 'rivers sea sediment', 'moon oceans']) {
        const find = async (http: HttpClient, k: string) => {
          const r = await http.call<FindBody>('POST', `/api/v1/kb/${k}/find`, {
            credential: pat,
            body: { query, features, top_k: 10, min_score: { semantic: -1 } },
          });
          expect(r.status).toBe(200);
          return normalised(r.body);
        };
        const [original, copied] = [await find(one, kbA), await find(two, copy)];
        expect(original.best.length).toBeGreaterThan(0);
        expect(copied).toEqual(original);
      }
    }
  }, 400_000);
});
