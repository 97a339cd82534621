import type { EntityManager } from 'typeorm';
import type { ExtractedFieldData } from '@kb/contracts';
import type { ResourceEntity } from '../../entities/resource.entity';
import { arr, obj } from './tags';
import { NODE_TYPES, RELATION_TYPES, type NodeType, type RelationType } from '@kb/contracts';

/** Relation types and node types of the knowledge graph (API-MAP 2.8; nucliadb_models RelationType, RelationNodeType), declared with the graph query language. */
export { NODE_TYPES, RELATION_TYPES, type NodeType, type RelationType };

/** The field key of a resource's own relations (user relations and its labels), not a field's. */
export const RESOURCE_LEVEL = '';

export interface GraphNodeValue {
  value: string;
  type: NodeType;
  group: string;
}

/** One edge of the graph index: `content.search_relations`. */
export interface RelationRow {
  source: GraphNodeValue;
  relation: RelationType;
  label: string;
  destination: GraphNodeValue;
  paragraph: string | null;
  /** Who produced it: processing (`processor`) or the user (`user`). */
  generated: 'processor' | 'user';
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function node(v: unknown, fallback?: GraphNodeValue): GraphNodeValue | undefined {
  if (v === undefined || v === null) return fallback;
  const o = obj(v);
  const value = str(o['value']).trim();
  const type = str(o['type']).toLowerCase() as NodeType;
  if (!value || !NODE_TYPES.includes(type)) return undefined;
  return { value, type, group: str(o['group']) };
}

function relation(rid: string, v: unknown, generated: RelationRow['generated']): RelationRow | undefined {
  const o = obj(v);
  const type = str(o['relation']).toUpperCase() as RelationType;
  if (!RELATION_TYPES.includes(type)) return undefined;
  const resourceNode: GraphNodeValue = { value: rid, type: 'resource', group: '' };
  const source = node(o['from'], resourceNode);
  const destination = node(o['to']);
  if (!source || !destination) return undefined;
  const paragraph = str(obj(o['metadata'])['paragraph_id']) || null;
  return { source, relation: type, label: str(o['label']), destination, paragraph, generated };
}

/** The relations processing found in a field (its metadata and every split's), resource → entity ENTITY edges. */
export function fieldRelations(rid: string, extracted: ExtractedFieldData): RelationRow[] {
  const metadata = obj(extracted.metadata);
  const sources = [obj(metadata['metadata']), ...Object.values(obj(metadata['split_metadata'])).map(obj)];
  return dedupe(
    sources.flatMap((m) =>
      arr(m['relations'])
        .map((r) => relation(rid, r, 'processor'))
        .filter((r): r is RelationRow => !!r),
    ),
  );
}

/**
 * A resource's own edges: the relations its user gave (`usermetadata.relations`, from the resource
 * unless they name another source) and an ABOUT edge to each of its classification labels.
 */
export function resourceRelations(resource: Pick<ResourceEntity, 'id' | 'usermetadata'>): RelationRow[] {
  const um = obj(resource.usermetadata);
  const rows = arr(um['relations'])
    .map((r) => relation(resource.id, r, 'user'))
    .filter((r): r is RelationRow => !!r);
  for (const c of arr(um['classifications'])) {
    const co = obj(c);
    const labelset = str(co['labelset']);
    const label = str(co['label']);
    if (!labelset || !label || co['cancelled_by_user'] === true) continue;
    rows.push({
      source: { value: resource.id, type: 'resource', group: '' },
      relation: 'ABOUT',
      label: '',
      destination: { value: `${labelset}/${label}`, type: 'label', group: labelset },
      paragraph: null,
      generated: 'user',
    });
  }
  return dedupe(rows);
}

function dedupe(rows: RelationRow[]): RelationRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const key = JSON.stringify([r.source, r.relation, r.label, r.destination, r.paragraph]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Replaces the edges of one field of a resource (or its resource-level edges) in one statement each. */
export async function replaceRelations(
  m: EntityManager,
  kbid: string,
  rid: string,
  field: string,
  rows: RelationRow[],
  o: { fresh?: boolean } = {},
): Promise<void> {
  if (!o.fresh) await m.query(`DELETE FROM content.search_relations WHERE rid = $1 AND field = $2`, [rid, field]);
  if (!rows.length) return;
  const cols = (k: (r: RelationRow) => unknown) => rows.map(k);
  await m.query(
    `INSERT INTO content.search_relations
       (kbid, rid, field, source_value, source_type, source_group, relation, label, dest_value, dest_type, dest_group, paragraph, generated)
     SELECT $1, $2, $3, s.* FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[]) AS s`,
    [
      kbid,
      rid,
      field,
      cols((r) => r.source.value),
      cols((r) => r.source.type),
      cols((r) => r.source.group),
      cols((r) => r.relation),
      cols((r) => r.label),
      cols((r) => r.destination.value),
      cols((r) => r.destination.type),
      cols((r) => r.destination.group),
      cols((r) => r.paragraph),
      cols((r) => r.generated),
    ],
  );
}
