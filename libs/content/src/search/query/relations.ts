import type { EntityManager } from 'typeorm';
import type { RetrievalScope } from './retrievers';
import { SqlParams } from './sql';
import type { FindRelations, RelatedTo } from '@kb/contracts';

export type { RelatedTo } from '@kb/contracts';

export type RelationsResult = FindRelations;

const MAX_NGRAM = 4;
const MAX_ENTITIES = 10;
const MAX_RESOURCES = 50;
const MAX_NEIGHBOURS = 20;

/** The query's word n-grams (1–4 words), lower-cased: the candidates for entity names. */
export function queryNgrams(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’.&-]*/gu) ?? [];
  const out = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= MAX_NGRAM && i + n <= words.length; n++) out.add(words.slice(i, i + n).join(' '));
  }
  return [...out];
}

/**
 * The `relations` feature of /find and /search: the entities (processing's named entities, the
 * index's `/e/<TYPE>/<value>` tags) named in the query, each with the resources that mention it
 * (ENTITY edges, in) and the entities most often found in the same paragraphs (OTHER edges labelled
 * `co-occurrence`, out, with their count). Everything goes through the request's scope, so filters,
 * hidden resources and security groups apply as in every other feature.
 */
export async function relationsSearch(m: EntityManager, scope: RetrievalScope, query: string): Promise<RelationsResult> {
  const grams = queryNgrams(query);
  if (grams.length === 0) return { entities: {} };
  // Each statement starts from the scope's own parameters (those its conditions refer to).
  const params = () => new SqlParams(scope.params.values);
  const p = params();
  const found = (await m.query(
    `SELECT DISTINCT tg AS tag FROM content.search_paragraphs p, unnest(p.tags) AS tg
      WHERE p.kbid = ${p.add(scope.kbid)} AND ${scope.where} AND tg LIKE '/e/%'
        AND lower(substr(tg, 4 + length(split_part(substr(tg, 4), '/', 1)) + 1)) = ANY(${p.add(grams)}::text[])
      ORDER BY 1 LIMIT ${MAX_ENTITIES}`,
    p.values,
  )) as { tag: string }[];
  const entities: RelationsResult['entities'] = {};
  for (const { tag } of found) {
    const family = tag.slice(3).split('/')[0] ?? '';
    const value = tag.slice(4 + family.length);
    const q = params();
    const resources = (await m.query(
      `SELECT p.rid::text AS rid, count(*)::int AS n FROM content.search_paragraphs p
        WHERE p.kbid = ${q.add(scope.kbid)} AND p.tags @> ARRAY[${q.add(tag)}]::text[] AND ${scope.where}
        GROUP BY p.rid ORDER BY n DESC, p.rid LIMIT ${MAX_RESOURCES}`,
      q.values,
    )) as { rid: string; n: number }[];
    const r = params();
    const neighbours = (await m.query(
      `SELECT tg AS tag, count(*)::int AS n FROM content.search_paragraphs p, unnest(p.tags) AS tg
        WHERE p.kbid = ${r.add(scope.kbid)} AND p.tags @> ARRAY[${r.add(tag)}]::text[] AND ${scope.where} AND tg LIKE '/e/%' AND tg <> ${r.add(tag)}
        GROUP BY tg ORDER BY n DESC, tg LIMIT ${MAX_NEIGHBOURS}`,
      r.values,
    )) as { tag: string; n: number }[];
    const related: RelatedTo[] = [
      ...resources.map((x): RelatedTo => ({
        entity: x.rid,
        entity_type: 'resource',
        entity_subtype: '',
        relation: 'ENTITY',
        relation_label: family,
        direction: 'in',
        metadata: { paragraphs: x.n },
        resource_id: x.rid,
      })),
      ...neighbours.map((x): RelatedTo => {
        const f = x.tag.slice(3).split('/')[0] ?? '';
        return {
          entity: x.tag.slice(4 + f.length),
          entity_type: 'entity',
          entity_subtype: f,
          relation: 'OTHER',
          relation_label: 'co-occurrence',
          direction: 'out',
          metadata: { paragraphs: x.n },
          resource_id: null,
        };
      }),
    ];
    const entry = (entities[value] ??= { related_to: [] });
    entry.related_to.push(...related);
  }
  return { entities };
}
