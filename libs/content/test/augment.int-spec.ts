import { AUGMENT_MAX_FIELD_TEXT, ContentSubjects, type AugmentRequest, type AugmentResponse } from '@kb/contracts';
import { AuditBatchService } from '../src/audit/audit-batch.service';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

/** `/augment`: given ids augmented without a search; invisible and unknown ids left out; bad input 422. */
describe('/augment', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000a8';
  const text = 'First part on tides.\n\nSecond part on the moon.\n\nThird part on the oceans.\n\nFourth part on the shore.';
  const ids = (rid: string) => {
    const out: string[] = [];
    let at = 0;
    for (const part of text.split('\n\n')) {
      out.push(`${rid}/t/body/${at}-${at + part.length}`);
      at += part.length + 2;
    }
    return out;
  };
  let tides = '';
  let hidden = '';
  let legal = '';

  beforeAll(async () => {
    fx = await startSearchFixture();
    tides = await fx.addResource(kbid, { title: 'Tides', usermetadata: { classifications: [{ labelset: 'topic', label: 'sea' }] } }, text, {
      summary: 'About tides.',
    });
    hidden = await fx.addResource(kbid, { title: 'Secret', hidden: true }, text);
    legal = await fx.addResource(kbid, { title: 'Legal', security: { access_groups: ['legal'] } }, text);
  }, 120_000);

  afterAll(async () => {
    await fx?.close();
  });

  const augment = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.augment, { kbid, body: body as AugmentRequest }) as Promise<AugmentResponse>;

  it('resources: title, summary, basic metadata and labels as asked; nothing else', async () => {
    const r = await augment({
      resources: [{ given: [tides.replace(/-/g, '').toUpperCase()], title: true, summary: true, basic: true, classification_labels: true }],
    });
    expect(Object.keys(r.resources)).toEqual([tides]);
    expect(r.resources[tides]).toMatchObject({
      id: tides,
      title: 'Tides',
      summary: 'About tides.',
      slug: expect.any(String),
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      classification_labels: { topic: ['sea'] },
    });
    const bare = await augment({ resources: [{ given: [tides] }] });
    expect(bare.resources).toEqual({ [tides]: { id: tides } });
    expect([bare.fields, bare.paragraphs]).toEqual([{}, {}]);
  });

  it('records an `augment` activity event (not a search: usage does not count it)', async () => {
    const record = jest.spyOn(fx.get(AuditBatchService), 'record');
    try {
      await augment({ resources: [{ given: [tides, hidden] }], fields: [{ given: [`${tides}/t/body`] }] });
      expect(record.mock.calls.map(([e]) => [e.type, e.kbid, e.details])).toEqual([
        ['augment', kbid, { resources_count: 1, fields_count: 1, paragraphs_count: 0 }],
      ]);
    } finally {
      record.mockRestore();
    }
  });

  it("fields: the field's text, its paragraphs in order", async () => {
    const r = await augment({ fields: [{ given: [`${tides}/t/body`, `${tides}/t/nope`], text: true }] });
    expect(r.fields).toEqual({ [`${tides}/t/body`]: { text: text.split('\n\n').join('\n') } });
    const bare = await augment({ fields: [{ given: [`${tides}/t/body`] }] });
    expect(bare.fields).toEqual({ [`${tides}/t/body`]: {} });
    // (a field's text is cut at AUGMENT_MAX_FIELD_TEXT characters, and says so)
    const long = await fx.addResource(
      kbid,
      { title: 'Long' },
      Array.from({ length: 30 }, (_, i) => `part ${i} `.padEnd(4000, 'x')).join('\n\n'),
    );
    const cut = await augment({ fields: [{ given: [`${long}/t/body`], text: true }] });
    expect(cut.fields[`${long}/t/body`]?.text).toHaveLength(AUGMENT_MAX_FIELD_TEXT);
    expect(cut.fields[`${long}/t/body`]?.text_truncated).toBe(true);
    expect(
      (await augment({ fields: [{ given: [`${tides}/t/body`], text: true }] })).fields[`${tides}/t/body`]?.text_truncated,
    ).toBeUndefined();
  });

  it('paragraphs: text, position and neighbours (as ids, and augmented themselves)', async () => {
    const [p0, p1, p2, p3] = ids(tides) as [string, string, string, string];
    const r = await augment({ paragraphs: [{ given: [{ id: p1 }], neighbours_before: 1, neighbours_after: 5 }] });
    expect(Object.keys(r.paragraphs).sort()).toEqual([p0, p1, p2, p3].sort());
    expect(r.paragraphs[p1]).toEqual({
      text: 'Second part on the moon.',
      position: { index: 1, start: 22, end: 46, page_number: null },
      neighbours_before: [p0],
      neighbours_after: [p2, p3],
    });
    expect(r.paragraphs[p0]?.text).toBe('First part on tides.');
    // (two asked paragraphs of one field: each its own window, the shared neighbour augmented once)
    const two = await augment({ paragraphs: [{ given: [{ id: p3 }, { id: p1 }], neighbours_before: 1, neighbours_after: 1 }] });
    expect(Object.keys(two.paragraphs).sort()).toEqual([p0, p1, p2, p3].sort());
    expect([two.paragraphs[p1]?.neighbours_before, two.paragraphs[p1]?.neighbours_after]).toEqual([[p0], [p2]]);
    expect([two.paragraphs[p3]?.neighbours_before, two.paragraphs[p3]?.neighbours_after]).toEqual([[p2], []]);
    expect(two.paragraphs[p2]).toEqual({ text: 'Third part on the oceans.', position: expect.objectContaining({ index: 2 }) });
    const noText = await augment({ paragraphs: [{ given: [{ id: p0 }], text: false }] });
    expect(noText.paragraphs).toEqual({ [p0]: { position: { index: 0, start: 0, end: 20, page_number: null } } });
  });

  it('hidden, other groups, other KBs and unknown ids are left out, never an error', async () => {
    const all = [tides, hidden, legal, '0f3c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b'];
    const body = (extra: Record<string, unknown>) => ({
      resources: [{ given: all, title: true }],
      fields: [{ given: all.map((rid) => `${rid}/t/body`), text: true }],
      paragraphs: [{ given: all.map((rid) => ({ id: ids(rid)[1] })), neighbours_before: 1, neighbours_after: 1 }],
      ...extra,
    });
    const rids = (r: AugmentResponse) =>
      [
        ...new Set([...Object.keys(r.resources), ...Object.keys(r.fields), ...Object.keys(r.paragraphs)].map((k) => k.split('/')[0])),
      ].sort();
    expect(rids(await augment(body({ security: { groups: ['sales'] } })))).toEqual([tides]);
    expect(rids(await augment(body({ security: { groups: ['legal'] } })))).toEqual([legal, tides].sort());
    expect(rids(await augment(body({ show_hidden: true, security: { groups: ['sales'] } })))).toEqual([hidden, tides].sort());
    expect(rids(await augment(body({})))).toEqual([legal, tides].sort());
    const other = (await fx.bus.request(ContentSubjects.augment, {
      kbid: '00000000-0000-4000-8000-0000000000a9',
      body: body({ show_hidden: true }) as AugmentRequest,
    })) as AugmentResponse;
    expect(other).toEqual({ resources: {}, fields: {}, paragraphs: {} });
    // (groups forced by the credential replace the body's)
    const forced = (await fx.bus.request(ContentSubjects.augment, {
      kbid,
      body: body({ security: { groups: ['legal'] } }) as AugmentRequest,
      forced_groups: ['sales'],
    })) as AugmentResponse;
    expect(rids(forced)).toEqual([tides]);
  });

  it('refuses bad requests with the locations of the mistakes', async () => {
    const p = ids(tides)[0] as string;
    const bad = (body: Record<string, unknown>, loc: unknown[]) =>
      expect(augment(body)).rejects.toMatchObject({ details: { detail: [expect.objectContaining({ loc })] } });
    await bad({ resources: [{}] }, ['body', 'resources', 0, 'given']);
    await bad({ resources: [{ given: [] }] }, ['body', 'resources', 0, 'given']);
    await bad({ resources: [{ given: ['nope'] }] }, ['body', 'resources', 0, 'given', 0]);
    await bad({ resources: [{ given: [tides], origin: true }] }, ['body', 'resources', 0, 'origin']);
    await bad({ resources: { given: [tides] } }, ['body', 'resources']);
    await bad({ resources: Array.from({ length: 11 }, () => ({ given: [tides] })) }, ['body', 'resources']);
    await bad({ fields: [{ given: [`${tides}/body`] }] }, ['body', 'fields', 0, 'given', 0]);
    await bad({ fields: [{ given: [`${tides}/t/body`], text: 'yes' }] }, ['body', 'fields', 0, 'text']);
    await bad({ paragraphs: [{ given: [p] }] }, ['body', 'paragraphs', 0, 'given', 0]);
    await bad({ paragraphs: [{ given: [{}] }] }, ['body', 'paragraphs', 0, 'given', 0, 'id']);
    await bad({ paragraphs: [{ given: [{ id: `${tides}/t/body` }] }] }, ['body', 'paragraphs', 0, 'given', 0, 'id']);
    await bad({ paragraphs: [{ given: [{ id: p }], neighbours_after: 11 }] }, ['body', 'paragraphs', 0, 'neighbours_after']);
    await bad({ paragraphs: [{ given: [{ id: p }], source_image: true }] }, ['body', 'paragraphs', 0, 'source_image']);
    // (101 ids in all, each list within its own bound)
    await bad(
      {
        resources: [{ given: Array.from({ length: 60 }, () => tides) }],
        paragraphs: [{ given: Array.from({ length: 41 }, () => ({ id: p })) }],
      },
      ['body'],
    );
    await bad({ whatever: 1 }, ['body', 'whatever']);
    expect(await augment({})).toEqual({ resources: {}, fields: {}, paragraphs: {} });
  });
});
