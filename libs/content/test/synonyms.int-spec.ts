import { ContentSubjects, ErrorCodes } from '@kb/contracts';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

describe('custom synonyms (with_synonyms)', () => {
  let fx: SearchFixture;
  const kbid = '00000000-0000-4000-8000-0000000000f1';
  let car: string;

  beforeAll(async () => {
    fx = await startSearchFixture();
    car = await fx.addResource(kbid, { title: 'Parking' }, 'The automobile was parked outside the station.');
    await fx.addResource(kbid, { title: 'Trains' }, 'Trains leave the station every hour.');
  }, 60_000);

  afterAll(async () => {
    await fx?.close();
  });

  const find = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.find, { kbid, body }) as Promise<{ resources: Record<string, unknown> }>;
  const search = (body: Record<string, unknown>) =>
    fx.bus.request(ContentSubjects.search, { kbid, body }) as unknown as Promise<{ paragraphs: { results: { rid: string }[] } }>;

  it("stores, returns and deletes a KB's synonyms, and refuses malformed ones listing every problem", async () => {
    expect(await fx.bus.request(ContentSubjects.getSynonyms, { kbid })).toEqual({ synonyms: {} });
    await fx.bus.request(ContentSubjects.setSynonyms, {
      kbid,
      body: { synonyms: { ' Car ': ['automobile', 'automobile', 'motor vehicle'] } },
    });
    expect(await fx.bus.request(ContentSubjects.getSynonyms, { kbid })).toEqual({ synonyms: { Car: ['automobile', 'motor vehicle'] } });
    await expect(
      fx.bus.request(ContentSubjects.setSynonyms, { kbid, body: { synonyms: { a: 'b', '': ['x'], c: [3] } } }),
    ).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
      details: {
        detail: [
          expect.objectContaining({ loc: ['body', 'synonyms', 'a'] }),
          expect.objectContaining({ loc: ['body', 'synonyms', ''] }),
          expect.objectContaining({ loc: ['body', 'synonyms', 'c'] }),
        ],
      },
    });
    await expect(fx.bus.request(ContentSubjects.setSynonyms, { kbid, body: { car: ['x'] } })).rejects.toMatchObject({
      code: ErrorCodes.VALIDATION_FAILED,
    });
    // The failed writes changed nothing.
    expect((await fx.bus.request(ContentSubjects.getSynonyms, { kbid })).synonyms).toEqual({ Car: ['automobile', 'motor vehicle'] });
  });

  it('matches the synonyms of a query term only when with_synonyms asks, in /find and /search', async () => {
    expect(Object.keys((await find({ query: 'car parked', features: ['keyword'] })).resources)).toEqual([car]);
    expect(Object.keys((await find({ query: 'a car', features: ['keyword'] })).resources)).toEqual([]);
    expect(Object.keys((await find({ query: 'a CAR', features: ['keyword'], with_synonyms: true })).resources)).toEqual([car]);
    expect((await search({ query: 'car', features: ['keyword'], with_synonyms: true })).paragraphs.results.map((r) => r.rid)).toEqual([
      car,
    ]);
    // A term inside another word does not count.
    expect(Object.keys((await find({ query: 'carpet', features: ['keyword'], with_synonyms: true })).resources)).toEqual([]);
    await fx.bus.request(ContentSubjects.deleteSynonyms, { kbid });
    expect(Object.keys((await find({ query: 'a car', features: ['keyword'], with_synonyms: true })).resources)).toEqual([]);
  });
});
