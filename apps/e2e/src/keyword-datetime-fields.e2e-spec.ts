import { type Credential, type HttpClient } from './support/http-client';
import { exportAndImport, issueLocs as locs, kbWithReader, resourceProcessed } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Found = { resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { text: string }> }> }> };
type Keywords = { value: { keywords: { value: string }[] }; status: string };
type Datetime = { value: { value: string }; status: string };

/**
 * keywordset and datetime fields over HTTP (standalone), in the reference's shapes: written by id,
 * slug and in resource create/modify, read alone and in the resource (`show`/`field_type`),
 * searched by their text, selected by the `field` filter, carried by export and import, deleted;
 * roles, tenants, bounds and bad input.
 */
describe('keywordset and datetime fields', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let kb: string;
  let otherKb: string;
  const rids: Record<'gear' | 'sprocket', string> = {} as never;
  const run = Date.now().toString(36);
  const path = (k = kb) => `/api/v1/kb/${k}`;
  const find = (body: Record<string, unknown>, k = kb, credential: Credential = reader) =>
    http.call<Found>('POST', `${path(k)}/find`, { credential, body: { features: ['keyword'], top_k: 50, ...body } });

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const fixture = await kbWithReader(topology, `kwdt-${run}`);
    ({ pat, reader, kb } = fixture);
    otherKb = await fixture.newKb(`kwdt-other-${run}`);
    const created = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
      credential: pat,
      body: {
        slug: 'gear',
        title: 'gear',
        texts: { body: { body: 'A catalogue entry about a gear.' } },
        keywordsets: { tags: { keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] } },
        datetimes: { released: { value: '2024-05-01T12:00:00+02:00' } },
      },
    });
    expect(created.status).toBe(201);
    rids.gear = created.body.uuid;
    const other = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
      credential: pat,
      body: { slug: 'sprocket', title: 'sprocket', texts: { body: { body: 'A catalogue entry about a sprocket.' } } },
    });
    rids.sprocket = other.body.uuid;
    const put = (url: string, body: unknown) => http.call<{ seqid: number }>('PUT', `${path()}${url}`, { credential: pat, body });
    const byId = await put(`/resource/${rids.sprocket}/keywordset/tags`, { keywords: [{ value: 'tungsten' }] });
    expect([byId.status, typeof byId.body.seqid]).toEqual([201, 'number']);
    expect((await put('/slug/sprocket/datetime/released', { value: '1999-12-31 23:59' })).status).toBe(201);
    for (const rid of Object.values(rids)) await resourceProcessed(http, pat, kb, rid);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('reads the fields back in the reference shapes, the datetime in one ISO form', async () => {
    const tags = await http.call<Keywords>('GET', `${path()}/resource/${rids.gear}/keywordset/tags?show=value`, { credential: reader });
    expect([tags.status, tags.body.value]).toEqual([200, { keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] }]);
    const when = await http.call<Datetime>('GET', `${path()}/slug/gear/datetime/released?show=value`, { credential: reader });
    expect([when.status, when.body.value]).toEqual([200, { value: '2024-05-01T10:00:00.000Z' }]);
    const naive = await http.call<Datetime>('GET', `${path()}/resource/${rids.sprocket}/datetime/released`, { credential: reader });
    expect(naive.body.value).toEqual({ value: '1999-12-31T23:59:00.000Z' });
  });

  it('renders them in the resource data, selected by field_type', async () => {
    type Data = { data: Record<string, Record<string, { value: unknown }>> };
    const all = await http.call<Data>('GET', `${path()}/resource/${rids.gear}?show=values`, { credential: reader });
    expect(Object.keys(all.body.data).sort()).toEqual(['datetimes', 'keywordsets', 'texts']);
    const some = await http.call<Data>('GET', `${path()}/resource/${rids.gear}?show=values&field_type=keywordset&field_type=datetime`, {
      credential: reader,
    });
    expect(Object.keys(some.body.data).sort()).toEqual(['datetimes', 'keywordsets']);
    expect(some.body.data['datetimes']?.['released']?.value).toEqual({ value: '2024-05-01T10:00:00.000Z' });
    const none = await http.call<Data>('GET', `${path()}/slug/gear?show=values&field_type=text`, { credential: reader });
    expect(Object.keys(none.body.data)).toEqual(['texts']);
    const bad = await http.call('GET', `${path()}/resource/${rids.gear}?show=values&field_type=keywords`, { credential: reader });
    expect(bad.status).toBe(422);
  });

  it('searches keywords as paragraphs of the field (w/), and datetimes by their date (d/)', async () => {
    const kw = await find({ query: 'zirconium' });
    expect(Object.keys(kw.body.resources)).toEqual([rids.gear]);
    const fields = kw.body.resources[rids.gear]?.fields ?? {};
    expect(Object.keys(fields)).toEqual(['/w/tags']);
    expect(Object.values(fields['/w/tags']?.paragraphs ?? {}).map((p) => p.text)).toEqual(['zirconium']);
    const date = await find({ query: '1999-12-31' });
    expect(Object.keys(date.body.resources)).toEqual([rids.sprocket]);
    expect(Object.keys(date.body.resources[rids.sprocket]?.fields ?? {})).toEqual(['/d/released']);
    // The field filter and `fields` name the new types.
    const typed = await find({ query: 'catalogue tungsten', filter_expression: { field: { prop: 'field', type: 'keywordset' } } });
    expect(Object.keys(typed.body.resources)).toEqual([rids.sprocket]);
    const named = await find({ query: 'tungsten zirconium', fields: ['w/tags'] });
    expect(Object.keys(named.body.resources).sort()).toEqual([rids.gear, rids.sprocket].sort());
    const other = await find({ query: 'zirconium' }, otherKb, pat);
    expect(Object.keys(other.body.resources)).toEqual([]);
  });

  it('refuses bad input at its location (422) and writes nothing', async () => {
    const put = (type: string, body: unknown, rid = rids.sprocket) =>
      http.call('PUT', `${path()}/resource/${rid}/${type}/tags2`, { credential: pat, body });
    const cases: [string, unknown, string[]][] = [
      ['datetime', { value: 'next tuesday' }, ['body.value']],
      ['datetime', { value: '2024-05-01' }, ['body.value']],
      ['datetime', { value: '2023-02-29T10:00:00Z' }, ['body.value']],
      ['datetime', { value: 1714557600 }, ['body.value']],
      ['datetime', {}, ['body.value']],
      ['datetime', { value: '2024-05-01T10:00:00Z', zone: 'UTC' }, ['body.zone']],
      ['keywordset', { keywords: Array.from({ length: 1001 }, (_, i) => ({ value: `k${i}` })) }, ['body.keywords']],
      ['keywordset', { keywords: 'zirconium' }, ['body.keywords']],
      [
        'keywordset',
        { keywords: ['zirconium', { value: 7 }, { value: 'x'.repeat(1001) }, {}] },
        ['body.keywords.0', 'body.keywords.1.value', 'body.keywords.2.value', 'body.keywords.3.value'],
      ],
      ['keywordset', { keywords: [], extra: 1 }, ['body.extra']],
    ];
    for (const [type, body, expected] of cases) {
      const res = await put(type, body);
      expect([type, res.status, locs(res.body)]).toEqual([type, 422, expected]);
      const detail = (res.body as { detail: { msg: unknown; type: unknown }[] }).detail;
      for (const d of detail) expect([typeof d.msg, typeof d.type]).toEqual(['string', 'string']);
    }
    for (const type of ['keywordset', 'datetime'])
      expect((await http.call('GET', `${path()}/resource/${rids.sprocket}/${type}/tags2`, { credential: pat })).status).toBe(404);
    const create = await http.call('POST', `${path()}/resources`, {
      credential: pat,
      body: { slug: `refused-${run}`, keywordsets: { ok: { keywords: [] } }, datetimes: { when: { value: 'soon' } } },
    });
    expect([create.status, locs(create.body)]).toEqual([422, ['body.datetimes.when.value']]);
    expect((await http.call('GET', `${path()}/slug/refused-${run}`, { credential: pat })).status).toBe(404);
    const modify = await http.call('PATCH', `${path()}/resource/${rids.sprocket}`, {
      credential: pat,
      body: { keywordsets: { tags: { keywords: [{ value: 1 }] } } },
    });
    expect([modify.status, locs(modify.body)]).toEqual([422, ['body.keywordsets.tags.keywords.0.value']]);
    const kept = await http.call<Keywords>('GET', `${path()}/resource/${rids.sprocket}/keywordset/tags`, { credential: pat });
    expect(kept.body.value).toEqual({ keywords: [{ value: 'tungsten' }] });
  });

  it('answers 404 for an unknown resource, slug or field, and 422 for an unknown field type', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const body = { keywords: [{ value: 'x' }] };
    expect((await http.call('PUT', `${path()}/resource/${unknown}/keywordset/tags`, { credential: pat, body })).status).toBe(404);
    expect(
      (await http.call('PUT', `${path()}/slug/nobody-${run}/datetime/d`, { credential: pat, body: { value: '2024-05-01T00:00:00Z' } }))
        .status,
    ).toBe(404);
    expect((await http.call('GET', `${path()}/resource/${unknown}/datetime/released`, { credential: pat })).status).toBe(404);
    expect((await http.call('GET', `${path()}/resource/${rids.gear}/datetime/nothing`, { credential: pat })).status).toBe(404);
    expect((await http.call('DELETE', `${path()}/resource/${unknown}/keywordset/tags`, { credential: pat })).status).toBe(404);
    const type = await http.call('GET', `${path()}/resource/${rids.gear}/keywords/tags`, { credential: pat });
    expect([type.status, locs(type.body)]).toEqual([422, ['path.field_type']]);
  });

  it('lets writers write and readers read, on their own KB only', async () => {
    const body = { keywords: [{ value: 'copper' }] };
    const url = (k = kb) => `${path(k)}/resource/${rids.gear}/keywordset/tags`;
    expect((await http.call('PUT', url(), { credential: reader, body })).status).toBe(403);
    expect((await http.call('PUT', url(), { body })).status).toBe(401);
    expect((await http.call('PUT', url(otherKb), { credential: pat, body })).status).toBe(404);
    expect((await http.call('GET', url(otherKb), { credential: pat })).status).toBe(404);
    expect((await http.call('DELETE', url(), { credential: reader })).status).toBe(403);
    expect((await http.call('POST', `${url()}/reprocess`, { credential: pat })).status).toBe(202);
  });

  it('carries both through export and import, searchable in the copy', async () => {
    await resourceProcessed(http, pat, kb, rids.gear);
    const copy = await exportAndImport(http, pat, kb);
    const tags = await http.call<Keywords>('GET', `${path(copy)}/slug/gear/keywordset/tags`, { credential: pat });
    expect(tags.body.value).toEqual({ keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] });
    const when = await http.call<Datetime>('GET', `${path(copy)}/slug/sprocket/datetime/released`, { credential: pat });
    expect(when.body.value).toEqual({ value: '1999-12-31T23:59:00.000Z' });
    const copied = await http.call<{ id: string }>('GET', `${path(copy)}/slug/gear`, { credential: pat });
    const found = await http.eventually(async () => {
      const res = await find({ query: 'zirconium' }, copy, pat);
      return Object.keys(res.body.resources).length > 0 ? Object.keys(res.body.resources) : undefined;
    }, 60_000);
    expect(found).toEqual([copied.body.id]);
  });

  it('deletes them: they leave the resource and search', async () => {
    for (const [type, id] of [
      ['keywordset', 'tags'],
      ['datetime', 'released'],
    ]) {
      expect((await http.call('DELETE', `${path()}/slug/gear/${type}/${id}`, { credential: pat })).status).toBe(204);
      expect((await http.call('GET', `${path()}/resource/${rids.gear}/${type}/${id}`, { credential: pat })).status).toBe(404);
    }
    const gone = await http.eventually(async () => {
      const res = await find({ query: 'zirconium' });
      return Object.keys(res.body.resources).length === 0 ? true : undefined;
    }, 30_000);
    expect(gone).toBe(true);
  });
});
