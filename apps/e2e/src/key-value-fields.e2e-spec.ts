import { type Credential, type HttpClient } from './support/http-client';
import { exportAndImport, issueLocs as locs, kbWithReader, resourceProcessed } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Found = { resources: Record<string, { fields: Record<string, unknown> }> };
type Field = { value: { values: Record<string, unknown> }; status: string };

/**
 * key_value fields over HTTP (standalone): written by id and slug and in resource create, checked
 * against the KB's key-value schema of the same id, searched by their values, filtered with the
 * filter_expression `key_value` member (/find through the memory index and /search), carried by
 * export and import; roles, tenants, bounds and bad input.
 */
describe('key_value fields', () => {
  let topology: Topology;
  let http: HttpClient;
  let pat: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let kb: string;
  let otherKb: string;
  const rids: Record<'sprocket' | 'gear' | 'notes', string> = {} as never;
  const run = Date.now().toString(36);
  const path = (k = kb) => `/api/v1/kb/${k}`;
  const schema = {
    name: 'product',
    fields: [
      { key: 'name', type: 'text' },
      { key: 'price', type: 'float' },
      { key: 'stock', type: 'integer', required: false },
      { key: 'released', type: 'date', required: false },
      { key: 'window', type: 'date', range: true, required: false },
    ],
  };
  const sprocket = {
    name: 'Steel sprocket',
    price: 12.5,
    stock: 40,
    released: '2024-03-01',
    window: { from: '2024-01-01', to: '2024-06-30' },
  };
  const gear = { name: 'Brass gear', price: 99, stock: 0, released: '2023-01-15' };

  /** The resources /find (memory index) and /search (SQL) return for the catalogue with this key_value filter; both must agree. */
  const filtered = async (kv: unknown, k = kb): Promise<string[]> => {
    const body = { query: 'catalogue', features: ['keyword'], top_k: 50, filter_expression: { key_value: kv } };
    const credential = k === kb ? reader : pat;
    const find = await http.call<Found>('POST', `${path(k)}/find`, { credential, body });
    expect(find.status).toBe(200);
    const search = await http.call<Found>('POST', `${path(k)}/search`, {
      credential,
      body: { query: 'catalogue', features: ['fulltext'], top_k: 50, filter_expression: { key_value: kv } },
    });
    expect(search.status).toBe(200);
    const names = (res: Found) =>
      Object.keys(res.resources)
        .map((rid) => Object.entries(rids).find(([, id]) => id === rid)?.[0] ?? rid)
        .sort();
    expect(names(search.body)).toEqual(names(find.body));
    return names(find.body);
  };

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const fixture = await kbWithReader(topology, `kv-${run}`);
    ({ pat, reader, kb } = fixture);
    otherKb = await fixture.newKb(`kv-other-${run}`);
    expect((await http.call('POST', `${path()}/kv-schemas`, { credential: pat, body: schema })).status).toBe(201);

    const create = async (slug: string, extra: Record<string, unknown> = {}) => {
      const res = await http.call<{ uuid: string }>('POST', `${path()}/resources`, {
        credential: pat,
        body: { slug, title: slug, texts: { body: { body: `A catalogue entry called ${slug}.` } }, ...extra },
      });
      expect(res.status).toBe(201);
      return res.body.uuid;
    };
    rids.sprocket = await create('sprocket', { key_values: { product: { values: sprocket } } });
    rids.gear = await create('gear');
    rids.notes = await create('notes');
    expect((await http.call('PUT', `${path()}/slug/gear/key_value/product`, { credential: pat, body: { values: gear } })).status).toBe(201);
    // No schema named "extra": any bounded values.
    expect(
      (
        await http.call('PUT', `${path()}/resource/${rids.notes}/key_value/extra`, {
          credential: pat,
          body: { values: { color: 'red', size: 3, fragile: true } },
        })
      ).status,
    ).toBe(201);
    for (const rid of Object.values(rids)) await resourceProcessed(http, pat, kb, rid);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it('reads a key_value field back with its values (dates of date keys in ISO form), alone and in the resource', async () => {
    const field = await http.call<Field>('GET', `${path()}/resource/${rids.sprocket}/key_value/product?show=value`, { credential: reader });
    expect(field.status).toBe(200);
    expect(field.body.value.values).toEqual({
      ...sprocket,
      released: '2024-03-01T00:00:00.000Z',
      window: { from: '2024-01-01T00:00:00.000Z', to: '2024-06-30T00:00:00.000Z' },
    });
    const bySlug = await http.call<Field>('GET', `${path()}/slug/notes/key_value/extra?show=value`, { credential: reader });
    expect(bySlug.body.value.values).toEqual({ color: 'red', size: 3, fragile: true });
    const resource = await http.call<{ data: { key_values: Record<string, Field> } }>(
      'GET',
      `${path()}/resource/${rids.gear}?show=values&field_type=key_value`,
      { credential: reader },
    );
    expect(Object.keys(resource.body.data)).toEqual(['key_values']);
    expect(resource.body.data.key_values['product']?.value.values).toEqual({ ...gear, released: '2023-01-15T00:00:00.000Z' });
  });

  it('searches a key_value field by its values: k/ paragraphs', async () => {
    const found = await http.call<Found>('POST', `${path()}/find`, {
      credential: reader,
      body: { query: 'brass', features: ['keyword'] },
    });
    expect(Object.keys(found.body.resources)).toEqual([rids.gear]);
    expect(Object.keys(found.body.resources[rids.gear]?.fields ?? {})).toEqual(['/k/product']);
  });

  it('filters by key_value conditions: eq, ranges of numbers and dates, contains, and/or/not', async () => {
    expect(await filtered({ schema_id: 'product', key: 'name', eq: 'Brass gear' })).toEqual(['gear']);
    expect(await filtered({ schema_id: 'product', key: 'price', eq: 12.5 })).toEqual(['sprocket']);
    expect(await filtered({ schema_id: 'product', key: 'price', gte: 50 })).toEqual(['gear']);
    expect(await filtered({ schema_id: 'product', key: 'stock', gte: 0, lte: 40 })).toEqual(['gear', 'sprocket']);
    expect(await filtered({ schema_id: 'product', key: 'released', gte: '2024-01-01' })).toEqual(['sprocket']);
    expect(await filtered({ schema_id: 'product', key: 'released', eq: '2023-01-15' })).toEqual(['gear']);
    expect(await filtered({ schema_id: 'product', key: 'name', contains: 'SPROCK' })).toEqual(['sprocket']);
    // A range holds an eq, and overlaps gte/lte.
    expect(await filtered({ schema_id: 'product', key: 'window', eq: '2024-02-01' })).toEqual(['sprocket']);
    expect(await filtered({ schema_id: 'product', key: 'window', gte: '2024-06-01', lte: '2025-01-01' })).toEqual(['sprocket']);
    expect(await filtered({ schema_id: 'product', key: 'window', gte: '2024-07-01' })).toEqual([]);
    expect(await filtered({ schema_id: 'extra', key: 'fragile', eq: true })).toEqual(['notes']);
    expect(await filtered({ not: { schema_id: 'product', key: 'name', eq: 'Steel sprocket' } })).toEqual(['gear', 'notes']);
    expect(
      await filtered({
        or: [
          { schema_id: 'product', key: 'price', lte: 20 },
          { schema_id: 'extra', key: 'color', eq: 'red' },
        ],
      }),
    ).toEqual(['notes', 'sprocket']);
    expect(
      await filtered({
        and: [
          { schema_id: 'product', key: 'price', gte: 10 },
          { schema_id: 'product', key: 'name', contains: 'gear' },
        ],
      }),
    ).toEqual(['gear']);
    // A text value is not a number; an unknown key or schema matches nothing.
    expect(await filtered({ schema_id: 'product', key: 'name', gte: 1 })).toEqual([]);
    expect(await filtered({ schema_id: 'nothing', key: 'name', eq: 'Brass gear' })).toEqual([]);
    // Another KB's fields are not seen.
    expect(await filtered({ schema_id: 'product', key: 'price', gte: 0 }, otherKb)).toEqual([]);
  });

  it('refuses bad key_value filters with their location', async () => {
    const bad: [unknown, string[]][] = [
      [{ schema_id: 'product', key: 'price' }, ['body.filter_expression.key_value']],
      [{ schema_id: 'product', key: 'price', gte: 'soon' }, ['body.filter_expression.key_value.gte']],
      [{ schema_id: 'a/b', key: 'price', eq: 1 }, ['body.filter_expression.key_value.schema_id']],
      [{ and: [{ schema_id: 'product', key: 'x', contains: '' }] }, ['body.filter_expression.key_value.and.0.contains']],
    ];
    for (const [kv, expected] of bad) {
      const res = await http.call('POST', `${path()}/find`, {
        credential: reader,
        body: { query: 'catalogue', filter_expression: { key_value: kv } },
      });
      expect([res.status, locs(res.body)]).toEqual([422, expected]);
    }
    const catalog = await http.call('POST', `${path()}/catalog`, {
      credential: reader,
      body: { filter_expression: { key_value: { schema_id: 'product', key: 'price', eq: 1 } } },
    });
    expect([catalog.status, locs(catalog.body)]).toEqual([422, ['body.filter_expression.key_value']]);
  });

  it('checks values against the schema of the same id and writes nothing on a refusal', async () => {
    const put = (rid: string, id: string, body: unknown, credential = pat) =>
      http.call('PUT', `${path()}/resource/${rid}/key_value/${id}`, { credential, body });
    const wrong = await put(rids.gear, 'product', { values: { price: 'cheap', color: 'blue', stock: 1.5, window: '2024-01-01' } });
    expect([wrong.status, locs(wrong.body)]).toEqual([
      422,
      ['body.values.color', 'body.values.name', 'body.values.price', 'body.values.stock', 'body.values.window'],
    ]);
    const kept = await http.call<Field>('GET', `${path()}/resource/${rids.gear}/key_value/product?show=value`, { credential: pat });
    expect(kept.body.value.values['name']).toBe('Brass gear');
    const created = await http.call('POST', `${path()}/resources`, {
      credential: pat,
      body: { slug: `refused-${run}`, key_values: { product: { values: { name: 'x', price: 'free' } } } },
    });
    expect([created.status, locs(created.body)]).toEqual([422, ['body.key_values.product.values.price']]);
    expect((await http.call('GET', `${path()}/slug/refused-${run}`, { credential: pat })).status).toBe(404);
  });

  it('bounds keys, key names and values, and refuses bad shapes at the edge', async () => {
    const put = (body: unknown, id = 'free') =>
      http.call('PUT', `${path()}/resource/${rids.notes}/key_value/${id}`, { credential: pat, body });
    const cases: [unknown, string[]][] = [
      [{}, ['body.values']],
      [{ values: 'x' }, ['body.values']],
      [{ values: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, ['body.values']],
      [
        { values: { 'a/b': 1, long: 'x'.repeat(10_001), odd: [1], backwards: { from: 3, to: 1 } } },
        ['body.values.a/b', 'body.values.backwards.to', 'body.values.long', 'body.values.odd'],
      ],
      [{ values: { a: 1 }, extra: true }, ['body.extra']],
    ];
    for (const [body, expected] of cases) {
      const res = await put(body);
      expect([res.status, locs(res.body)]).toEqual([422, expected]);
    }
    const badId = await put({ values: { a: 1 } }, 'bad%20id');
    expect([badId.status, locs(badId.body)]).toEqual([422, ['path.field_id']]);
    expect((await http.call('GET', `${path()}/resource/${rids.notes}/key_value/free`, { credential: pat })).status).toBe(404);
  });

  it('lets writers write and readers read, on their own KB only', async () => {
    const body = { values: { color: 'green' } };
    expect((await http.call('PUT', `${path()}/resource/${rids.notes}/key_value/extra`, { credential: reader, body })).status).toBe(403);
    expect((await http.call('PUT', `${path(otherKb)}/resource/${rids.notes}/key_value/extra`, { credential: pat, body })).status).toBe(404);
    expect((await http.call('GET', `${path(otherKb)}/resource/${rids.notes}/key_value/extra`, { credential: pat })).status).toBe(404);
    expect((await http.call('PUT', `${path()}/resource/${rids.notes}/key_value/extra`, { body })).status).toBe(401);
  });

  it('carries key_value fields through export and import, filters included', async () => {
    const copy = await exportAndImport(http, pat, kb);
    const field = await http.call<Field>('GET', `${path(copy)}/slug/gear/key_value/product?show=value`, { credential: pat });
    expect(field.body.value.values).toEqual({ ...gear, released: '2023-01-15T00:00:00.000Z' });
    expect((await http.call('GET', `${path(copy)}/kv-schemas/product`, { credential: pat })).status).toBe(200);
    const found = await http.call<Found>('POST', `${path(copy)}/find`, {
      credential: pat,
      body: {
        query: 'catalogue',
        features: ['keyword'],
        filter_expression: { key_value: { schema_id: 'product', key: 'price', gte: 50 } },
      },
    });
    const copied = await http.call<{ id: string }>('GET', `${path(copy)}/slug/gear`, { credential: pat });
    expect(Object.keys(found.body.resources)).toEqual([copied.body.id]);
  });

  it('deletes a key_value field: its values leave search and filters', async () => {
    expect((await http.call('DELETE', `${path()}/resource/${rids.notes}/key_value/extra`, { credential: pat })).status).toBe(204);
    expect((await http.call('GET', `${path()}/resource/${rids.notes}/key_value/extra`, { credential: pat })).status).toBe(404);
    expect(await filtered({ schema_id: 'extra', key: 'fragile', eq: true })).toEqual([]);
  });
});
