import { ContentSubjects, DomainError } from '@kb/contracts';
import { queryNgrams } from '../src/search/query/relations';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Related = {
  entity: string;
  entity_type: string;
  entity_subtype: string;
  relation: string;
  relation_label: string;
  direction: string;
  resource_id: string | null;
  metadata: { paragraphs: number };
};
type Relations = { entities: Record<string, { related_to: Related[] }> };

describe('relations feature (/find, /search)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000f7';
  let curie: string;
  let sorbonne: string;
  let secret: string;

  beforeAll(async () => {
    fx = await startSearchFixture();
    curie = await fx.addResource(kbid, { title: 'Curie' }, 'Marie Curie worked in Paris on radium.', {
      ner: { 'Marie Curie': 'PERSON', Paris: 'PLACE', radium: 'OTHER' },
    });
    sorbonne = await fx.addResource(kbid, { title: 'Sorbonne' }, 'Marie Curie taught at the Sorbonne.', {
      ner: { 'Marie Curie': 'PERSON', Sorbonne: 'ORG' },
    });
    secret = await fx.addResource(kbid, { title: 'Private', security: { access_groups: ['lab'] } }, 'Marie Curie kept notes with Pierre.', {
      ner: { 'Marie Curie': 'PERSON', Pierre: 'PERSON' },
    });
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const find = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.find, { kbid, body }) as unknown as Promise<{ relations: Relations }>;

  it('cuts the query into word n-grams', () => {
    expect(queryNgrams('Who was Marie Curie?')).toEqual(expect.arrayContaining(['marie curie', 'marie', 'curie', 'who was marie curie']));
  });

  it('finds the entities the query names, the resources that mention them and the entities around them', async () => {
    const { relations } = await find({
      query: 'what did marie curie discover',
      features: ['relations', 'keyword'],
      security: { groups: ['lab'] },
    });
    expect(Object.keys(relations.entities)).toEqual(['Marie Curie']);
    const related = relations.entities['Marie Curie']?.related_to ?? [];
    const resources = related.filter((r) => r.entity_type === 'resource');
    expect(resources.map((r) => r.resource_id).sort()).toEqual([curie, secret, sorbonne].sort());
    for (const r of resources)
      expect(r).toMatchObject({ relation: 'ENTITY', relation_label: 'PERSON', direction: 'in', entity: r.resource_id });
    const around = related
      .filter((r) => r.entity_type === 'entity')
      .map((r) => `${r.entity_subtype}/${r.entity}`)
      .sort();
    expect(around).toEqual(['ORG/Sorbonne', 'OTHER/radium', 'PERSON/Pierre', 'PLACE/Paris']);
    expect(related.find((r) => r.entity === 'Paris')).toMatchObject({
      relation: 'OTHER',
      relation_label: 'co-occurrence',
      direction: 'out',
      resource_id: null,
      metadata: { paragraphs: 1 },
    });
  });

  it('applies security groups, filters and /search the same way, and finds nothing when no entity is named', async () => {
    const publicOnly = (
      (await fx.bus.request(ContentSubjects.find, {
        kbid,
        body: { query: 'Marie Curie', features: ['relations'], security: { groups: ['other'] } },
      })) as unknown as { relations: Relations }
    ).relations;
    const related = publicOnly.entities['Marie Curie']?.related_to ?? [];
    expect(
      related
        .map((r) => r.resource_id)
        .filter(Boolean)
        .sort(),
    ).toEqual([curie, sorbonne].sort());
    expect(related.some((r) => r.entity === 'Pierre')).toBe(false);
    const filtered = (
      await find({ query: 'Marie Curie', features: ['relations'], filter_expression: { field: { prop: 'resource', id: sorbonne } } })
    ).relations;
    expect(filtered.entities['Marie Curie']?.related_to.filter((r) => r.entity_type === 'resource').map((r) => r.resource_id)).toEqual([
      sorbonne,
    ]);
    const search = (await fx.bus.request(ContentSubjects.search, {
      kbid,
      body: { query: 'paris', features: ['relations'] },
    })) as unknown as { relations: Relations };
    expect(Object.keys(search.relations.entities)).toEqual(['Paris']);
    expect((await find({ query: 'nothing named here', features: ['relations'] })).relations).toEqual({ entities: {} });
    await expect(find({ query: 'x', features: ['graph'] })).rejects.toBeInstanceOf(DomainError);
  });
});
