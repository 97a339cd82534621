import { ContentSubjects, DomainError } from '@kb/contracts';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

type Group = { title: string | null; custom: boolean; entities: Record<string, { value: string }> };

/**
 * Entities groups against the real index on PGlite, with the memory index (as deployed) and
 * without it (the SQL path large KBs take, whose answers are kept per index generation): the same
 * answers, and a write to the index shows at once on both.
 */
describe.each([
  ['memory index', {}],
  ['SQL only', { searchMemory: { budgetBytes: 0 } }],
])('entities groups (%s)', (_name, options) => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000e1';

  beforeAll(async () => {
    fx = await startSearchFixture(options);
    await fx.addResource(kbid, { title: 'Trip' }, 'From Paris to Rome.', {
      ner: { Paris: 'PLACE', Rome: 'PLACE', 'Ada Lovelace': 'PERSON' },
    });
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const list = async () => (await fx.bus.request(ContentSubjects.listEntitiesGroups, { kbid })).groups;
  const get = (group: string) => fx.bus.request(ContentSubjects.getEntitiesGroup, { kbid, group }) as Promise<Group>;

  it('lists the families of the index and their values; a KB without an index has none', async () => {
    expect(Object.keys(await list())).toEqual(['PERSON', 'PLACE']);
    expect(Object.keys((await get('PLACE')).entities)).toEqual(['Paris', 'Rome']);
    expect(await fx.bus.request(ContentSubjects.listEntitiesGroups, { kbid: '00000000-0000-4000-8000-0000000000e2' })).toEqual({
      uuid: '00000000-0000-4000-8000-0000000000e2',
      groups: {},
    });
    await expect(get('ORG')).rejects.toBeInstanceOf(DomainError);
  });

  it('sees a new write to the index at once (the kept SQL answers belong to the old generation)', async () => {
    expect(Object.keys((await get('PLACE')).entities)).toEqual(['Paris', 'Rome']);
    await fx.addResource(kbid, { title: 'Second trip' }, 'Then Oslo.', { ner: { Oslo: 'PLACE', Acme: 'ORG' } });
    expect(Object.keys((await get('PLACE')).entities)).toEqual(['Oslo', 'Paris', 'Rome']);
    expect(Object.keys(await list())).toEqual(['ORG', 'PERSON', 'PLACE']);
  });

  it("merges users' changes: hidden values, extra values, a deleted group", async () => {
    await fx.bus.request(ContentSubjects.updateEntitiesGroup, {
      kbid,
      group: 'PLACE',
      body: { title: 'Places', add: { Lima: { value: 'Lima' } }, delete: ['Rome'] },
    });
    const place = await get('PLACE');
    expect([place.title, place.custom, Object.keys(place.entities).sort()]).toEqual(['Places', false, ['Lima', 'Oslo', 'Paris']]);
    await fx.bus.request(ContentSubjects.deleteEntitiesGroup, { kbid, group: 'PERSON' });
    expect(Object.keys(await list())).toEqual(['ORG', 'PLACE']);
    await expect(get('PERSON')).rejects.toBeInstanceOf(DomainError);
  });
});
