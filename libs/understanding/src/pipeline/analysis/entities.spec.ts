import { extractEntities, type Entity } from './entities';

const EN =
  'Dr. Jane Smith met Barack Obama in Paris, France on March 3, 2021. Microsoft Corp. paid $4.5 million to Apple Inc.! ' +
  'Contact jane@example.com or visit https://example.org/path?x=1. Call +1 (555) 123-4567 now. ' +
  'The report was filed on 2021-03-04 by Mr. Brown, who lives in Berlin.';

const pairs = (entities: Entity[]): [string, string][] => entities.map((e) => [e.label, e.text]);

describe('extractEntities', () => {
  const { entities } = extractEntities(EN, 'en');

  it.each([
    ['PERSON', 'Dr. Jane Smith'],
    ['PERSON', 'Barack Obama'],
    ['PERSON', 'Mr. Brown'],
    ['PLACE', 'Paris, France'],
    ['PLACE', 'Berlin'],
    ['ORG', 'Microsoft Corp.'],
    ['ORG', 'Apple Inc.'],
    ['DATE', 'March 3, 2021'],
    ['DATE', '2021-03-04'],
    ['MONEY', '$4.5 million'],
    ['EMAIL', 'jane@example.com'],
    ['URL', 'https://example.org/path?x=1'],
    ['PHONE', '+1 (555) 123-4567'],
  ])('finds %s %s', (label, text) => {
    expect(pairs(entities)).toContainEqual([label, text]);
  });

  it('gives offsets that slice to the entity text, in text order, without overlaps', () => {
    for (const e of entities) expect(EN.slice(e.start, e.end)).toBe(e.text);
    for (let i = 1; i < entities.length; i++) expect(entities[i]!.start).toBeGreaterThanOrEqual(entities[i - 1]!.end);
  });

  it('keeps every mention of a repeated entity once', () => {
    const text = 'Call 555-123-4567 today. Call 555-123-4567 again, or write to ann@example.org.';
    const found = extractEntities(text, 'en').entities;
    expect(found.filter((e) => e.label === 'PHONE').map((e) => e.start)).toEqual([5, 30]);
    expect(new Set(found.map((e) => `${e.start}-${e.end}`)).size).toBe(found.length);
  });

  it.each([
    ['a year range', 'Between 2019 2020 sales grew.'],
    ['a grouped amount', 'They raised 100 000 000 dollars.'],
    ['a date', 'Due 12.05.2024 at noon.'],
  ])('does not take %s for a phone number', (_name, text) => {
    expect(extractEntities(text, 'en').entities.filter((e) => e.label === 'PHONE')).toEqual([]);
  });

  it('uses only the language-independent patterns for other languages', () => {
    const text = 'Escriba a ana@example.es antes del 15/03/2024, o llame al +34 912 345 678. Precio: 20 € en Madrid con Pedro Sánchez.';
    const found = extractEntities(text, 'es').entities;
    expect(pairs(found)).toEqual([
      ['EMAIL', 'ana@example.es'],
      ['DATE', '15/03/2024'],
      ['PHONE', '+34 912 345 678'],
      ['MONEY', '20 €'],
    ]);
    for (const e of found) expect(text.slice(e.start, e.end)).toBe(e.text);
  });

  it('keeps UTF-16 offsets exact after astral characters', () => {
    const text = '😀🎉 Angela Merkel visited London. Mail: a.b@example.co.uk 😀';
    const found = extractEntities(text, 'en').entities;
    expect(pairs(found)).toEqual(
      expect.arrayContaining([
        ['PERSON', 'Angela Merkel'],
        ['PLACE', 'London'],
        ['EMAIL', 'a.b@example.co.uk'],
      ]),
    );
    for (const e of found) expect(text.slice(e.start, e.end)).toBe(e.text);
  });

  it('returns nothing for empty text', () => {
    expect(extractEntities('', 'en')).toEqual({ entities: [] });
  });
});
