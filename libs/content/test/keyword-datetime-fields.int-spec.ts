import {
  ContentSubjects,
  DomainError,
  UnderstandingSubjects,
  extractedBlobKey,
  keywordsetText,
  type ContentFieldType,
  type ExtractedFieldData,
} from '@kb/contracts';
import { eventually } from '@kb/platform/testing';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type FindResults = { resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { text: string }> }> }> };

/**
 * keywordset and datetime fields in the content service (PGlite, in-process bus): stored by
 * create, modify and put (the datetime in one ISO form, the migration's type check taking both),
 * rendered under `keywordsets`/`datetimes` and selected by `field_type`, refused whole on bad
 * input, indexed under their letters (`w`, `d`) and selected by the `field` filter.
 */
describe('keywordset and datetime fields (content service)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000f1';

  beforeAll(async () => {
    fx = await startSearchFixture();
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const get = (rid: string, field_type?: string[]) =>
    fx.bus.request(ContentSubjects.getResource, { kbid, rid, show: ['basic', 'values'], ...(field_type ? { field_type } : {}) } as never);
  const field = (rid: string, field_type: ContentFieldType, field_id: string) =>
    fx.bus.request(ContentSubjects.getField, { kbid, rid, field_type, field_id, show: ['value'] });
  /** Processing's result for one field: its text, one paragraph per blank-line-separated part. */
  const processed = async (rid: string, field_type: ContentFieldType, field_id: string, text: string) => {
    const resource = (await fx.bus.request(ContentSubjects.getResource, { kbid, rid })) as { last_seqid: number };
    const letter = { keywordset: 'w', datetime: 'd' }[field_type as 'keywordset' | 'datetime'];
    const paragraphs: { start: number; end: number; kind: string; key: string }[] = [];
    let at = 0;
    for (const part of text.split('\n\n')) {
      paragraphs.push({ start: at, end: at + part.length, kind: 'TEXT', key: `${rid}/${letter}/${field_id}/${at}-${at + part.length}` });
      at += part.length + 2;
    }
    const ids = { processing_id: `p-${rid}-${field_id}`, kbid, rid, field_type, field_id, seqid: resource.last_seqid };
    const data: ExtractedFieldData = {
      text: { text, split_text: {}, deleted_splits: [] },
      metadata: { metadata: { paragraphs, language: 'en', mime_type: 'text/plain' }, split_metadata: {}, deleted_splits: [] },
      vectors: { vectors: { vectors: [] }, split_vectors: {}, deleted_splits: [] },
    };
    await fx.blobs.put(extractedBlobKey(ids), JSON.stringify(data));
    await fx.bus.enqueue(UnderstandingSubjects.fieldProcessed, { ...ids, extracted_key: extractedBlobKey(ids) });
    await eventually(async () => ((await field(rid, field_type, field_id)).status === 'PROCESSED' ? true : undefined), 15_000);
  };
  const find = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.find, { kbid, body: { features: ['keyword'], top_k: 20, ...body } }) as unknown as Promise<FindResults>;

  let rid: string;

  it('stores both from a resource create, the datetime in one ISO form, and renders them by field_type', async () => {
    ({ uuid: rid } = await fx.bus.request(ContentSubjects.createResource, {
      kbid,
      body: {
        title: 'Gear',
        keywordsets: { tags: { keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] } },
        datetimes: { released: { value: '2024-05-01T12:00:00+02:00' } },
      },
    }));
    const all = await get(rid);
    expect(Object.keys(all.data ?? {}).sort()).toEqual(['datetimes', 'keywordsets']);
    expect(all.data?.keywordsets?.['tags']?.value).toEqual({ keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] });
    expect(all.data?.datetimes?.['released']?.value).toEqual({ value: '2024-05-01T10:00:00.000Z' });
    expect(Object.keys((await get(rid, ['datetime'])).data ?? {})).toEqual(['datetimes']);
    expect(Object.keys((await get(rid, ['text'])).data ?? {})).toEqual([]);
    expect((await field(rid, 'keywordset', 'tags')).status).toBe('PENDING');
  });

  it('replaces them by put and by modify', async () => {
    await fx.bus.request(ContentSubjects.putField, {
      kbid,
      rid,
      field_type: 'datetime',
      field_id: 'released',
      value: { value: '2024-05-02 08:30' },
    } as never);
    expect((await field(rid, 'datetime', 'released')).value).toEqual({ value: '2024-05-02T08:30:00.000Z' });
    await fx.bus.request(ContentSubjects.modifyResource, { kbid, rid, body: { keywordsets: { more: { keywords: [] } } } });
    expect((await field(rid, 'keywordset', 'more')).value).toEqual({ keywords: [] });
  });

  it('refuses bad values at their location and stores nothing', async () => {
    const put = (field_type: string, value: unknown) =>
      fx.bus.request(ContentSubjects.putField, { kbid, rid, field_type, field_id: 'bad', value } as never);
    const issuesOf = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DomainError);
      return ((err as DomainError).details?.['detail'] as { loc: (string | number)[]; type: string }[]).map((i) => [
        i.loc.join('.'),
        i.type,
      ]);
    };
    expect(await issuesOf(put('datetime', { value: '2024-02-30T00:00:00Z' }))).toEqual([['body.value', 'datetime_parsing']]);
    expect(await issuesOf(put('keywordset', { keywords: [{ value: '' }] }))).toEqual([['body.keywords.0.value', 'string_too_short']]);
    // (A resource create or modify body is checked at the edge: apps/e2e keyword-datetime-fields.)
    await expect(field(rid, 'datetime', 'bad')).rejects.toBeInstanceOf(DomainError);
    await expect(field(rid, 'keywordset', 'bad')).rejects.toBeInstanceOf(DomainError);
  });

  it('indexes their text under w/ and d/, selected by the field filter and by fields', async () => {
    await processed(rid, 'keywordset', 'tags', keywordsetText({ keywords: [{ value: 'zirconium' }, { value: 'helical teeth' }] }));
    await processed(rid, 'datetime', 'released', '2024-05-02 08:30:00 UTC');
    const kw = await find({ query: 'zirconium' });
    expect(Object.keys(kw.resources)).toEqual([rid]);
    expect(Object.keys(kw.resources[rid]?.fields ?? {})).toEqual(['/w/tags']);
    expect(Object.values(kw.resources[rid]?.fields['/w/tags']?.paragraphs ?? {}).map((p) => p.text)).toEqual(['zirconium']);
    const date = await find({ query: '2024-05-02' });
    expect(Object.keys(date.resources[rid]?.fields ?? {})).toEqual(['/d/released']);
    const typed = await find({ query: 'zirconium', filter_expression: { field: { prop: 'field', type: 'datetime' } } });
    expect(Object.keys(typed.resources)).toEqual([]);
    const named = await find({ query: 'zirconium', fields: ['w/tags'] });
    expect(Object.keys(named.resources)).toEqual([rid]);
  });

  it('deletes a field: it leaves the resource and the index', async () => {
    await fx.bus.request(ContentSubjects.deleteField, { kbid, rid, field_type: 'keywordset', field_id: 'tags' } as never);
    await expect(field(rid, 'keywordset', 'tags')).rejects.toBeInstanceOf(DomainError);
    expect(Object.keys((await find({ query: 'zirconium' })).resources)).toEqual([]);
  });
});
