import type { Span } from '../split';
import { ENTITY_LABELS, type Entity, type EntityLabel } from './entities';

/** The group under which this pipeline files its entities in `metadata.entities` (spec 2.3). */
export const ENTITY_GROUP = 'processor';

export interface SpecEntity {
  text: string;
  label: EntityLabel;
  positions: Span[];
}

/** The three entity views of a field's `extracted.metadata.metadata` (spec 2.3). */
export interface SpecNer {
  ner: Record<string, EntityLabel>;
  entities: Record<string, { entities: SpecEntity[] }>;
  positions: Record<string, { entity: string; position: Span[] }>;
}

export interface RelationNode {
  value: string;
  type: 'resource' | 'entity';
  group: string;
}

/** Relation record of spec 2.2. */
export interface RelationRecord {
  relation: 'ENTITY';
  label: string;
  from: RelationNode;
  to: RelationNode;
  metadata: { paragraph_id?: string; to_start?: number; to_end?: number };
}

/** Groups mentions by (label, text), keeping every position in text order. */
function group(entities: Entity[]): SpecEntity[] {
  const byKey = new Map<string, SpecEntity>();
  for (const e of [...entities].sort((a, b) => a.start - b.start)) {
    const key = `${e.label}/${e.text}`;
    const entry = byKey.get(key) ?? { text: e.text, label: e.label, positions: [] };
    entry.positions.push({ start: e.start, end: e.end });
    byKey.set(key, entry);
  }
  return [...byKey.values()];
}

/**
 * `ner` maps one text to one label, yet "Washington" can be a PERSON and a PLACE in the same
 * field: the label with more mentions wins, then the earlier one in ENTITY_LABELS.
 */
export function toSpecNer(entities: Entity[], groupName: string = ENTITY_GROUP): SpecNer {
  const grouped = group(entities);
  const ner: Record<string, EntityLabel> = {};
  const mentions: Record<string, number> = {};
  const positions: SpecNer['positions'] = {};
  for (const e of grouped) {
    const current = ner[e.text];
    const better =
      current === undefined ||
      e.positions.length > (mentions[e.text] ?? 0) ||
      (e.positions.length === mentions[e.text] && ENTITY_LABELS.indexOf(e.label) < ENTITY_LABELS.indexOf(current));
    if (better) {
      ner[e.text] = e.label;
      mentions[e.text] = e.positions.length;
    }
    positions[`${e.label}/${e.text}`] = { entity: e.text, position: e.positions };
  }
  return { ner, entities: grouped.length ? { [groupName]: { entities: grouped } } : {}, positions };
}

export interface RelationOptions {
  /** Field id (`rid/t/body`): with `paragraphs`, names the paragraph of the first mention. */
  fieldId?: string;
  paragraphs?: Span[];
}

/**
 * One ENTITY relation from the resource to each distinct entity (the graph's "this resource
 * mentions X"), carrying where the entity is first mentioned.
 */
export function entityRelations(resourceId: string, entities: Entity[], options: RelationOptions = {}): RelationRecord[] {
  return group(entities).map((e) => {
    const first = e.positions[0] as Span;
    const paragraph = options.paragraphs?.find((p) => p.start <= first.start && first.end <= p.end);
    return {
      relation: 'ENTITY',
      label: e.label,
      from: { value: resourceId, type: 'resource', group: '' },
      to: { value: e.text, type: 'entity', group: e.label },
      metadata: {
        ...(paragraph && options.fieldId ? { paragraph_id: `${options.fieldId}/${paragraph.start}-${paragraph.end}` } : {}),
        to_start: first.start,
        to_end: first.end,
      },
    };
  });
}
