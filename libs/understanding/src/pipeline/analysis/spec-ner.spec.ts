import type { Entity } from './entities';
import { entityRelations, toSpecNer } from './spec-ner';

const text = 'Paris is big. Washington met Ana in Paris. Washington is a city.';
const at = (value: string, label: Entity['label'], from = 0): Entity => {
  const start = text.indexOf(value, from);
  return { text: value, label, start, end: start + value.length };
};
const entities: Entity[] = [
  at('Paris', 'PLACE'),
  at('Washington', 'PERSON'),
  at('Ana', 'PERSON'),
  at('Paris', 'PLACE', 20),
  at('Washington', 'PLACE', 40),
];

describe('toSpecNer', () => {
  const ner = toSpecNer(entities);

  it('maps each text to one label, the one with more mentions', () => {
    expect(ner.ner).toEqual({ Paris: 'PLACE', Washington: 'PERSON', Ana: 'PERSON' });
  });

  it('groups mentions under the processor group with every position', () => {
    expect(ner.entities['processor']!.entities).toEqual([
      {
        text: 'Paris',
        label: 'PLACE',
        positions: [
          { start: 0, end: 5 },
          { start: 36, end: 41 },
        ],
      },
      { text: 'Washington', label: 'PERSON', positions: [{ start: 14, end: 24 }] },
      { text: 'Ana', label: 'PERSON', positions: [{ start: 29, end: 32 }] },
      { text: 'Washington', label: 'PLACE', positions: [{ start: 43, end: 53 }] },
    ]);
  });

  it('keys positions by LABEL/text', () => {
    expect(Object.keys(ner.positions)).toEqual(['PLACE/Paris', 'PERSON/Washington', 'PERSON/Ana', 'PLACE/Washington']);
    expect(ner.positions['PLACE/Paris']).toEqual({
      entity: 'Paris',
      position: [
        { start: 0, end: 5 },
        { start: 36, end: 41 },
      ],
    });
    for (const { entity, position } of Object.values(ner.positions)) {
      for (const p of position) expect(text.slice(p.start, p.end)).toBe(entity);
    }
  });

  it('is empty without entities', () => {
    expect(toSpecNer([])).toEqual({ ner: {}, entities: {}, positions: {} });
  });
});

describe('entityRelations', () => {
  it('links the resource to each distinct entity, at its first mention and paragraph', () => {
    const relations = entityRelations('rid1', entities, {
      fieldId: 'rid1/t/body',
      paragraphs: [
        { start: 0, end: 13 },
        { start: 14, end: 64 },
      ],
    });
    expect(relations).toHaveLength(4);
    expect(relations[1]).toEqual({
      relation: 'ENTITY',
      label: 'PERSON',
      from: { value: 'rid1', type: 'resource', group: '' },
      to: { value: 'Washington', type: 'entity', group: 'PERSON' },
      metadata: { paragraph_id: 'rid1/t/body/14-64', to_start: 14, to_end: 24 },
    });
    expect(relations[0]!.metadata.paragraph_id).toBe('rid1/t/body/0-13');
  });

  it('omits paragraph_id without paragraphs', () => {
    expect(entityRelations('r', [at('Ana', 'PERSON')])[0]!.metadata).toEqual({ to_start: 29, to_end: 32 });
  });
});
