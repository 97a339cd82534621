import type { EntityManager } from 'typeorm';
import { likePrefix, SqlParams } from './sql';

export interface FacetSource {
  /** `FROM` items naming the rows and their tags, e.g. `content.resources r` + `r.search_tags`. */
  from: string;
  tags: string;
  /** What is counted once per tag (a resource id: facets count resources). */
  counted: string;
  /** Conditions on the rows (filters and security included), with their parameters in `params`. */
  where: string;
  params: SqlParams;
}

/**
 * Facets (API-MAP 2.7): for each prefix, its direct children with the number of matching
 * resources carrying them, e.g. `{"/l/genre": {"/l/genre/scifi": 3}}`. The counts come from the
 * same conditions as the results, security included, so a facet never counts what the caller
 * may not see. Equal counts are ordered by the tags' bytes (`COLLATE "C"`), on any server's
 * collation, as the memory index orders them.
 */
export async function facetCounts(
  m: EntityManager,
  source: FacetSource,
  prefixes: string[],
): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const prefix of prefixes) {
    const p = new SqlParams(source.params.values);
    const clean = prefix.replace(/\/+$/, '');
    const rows = (await m.query(
      `SELECT (${p.add(clean)} || '/' || split_part(substr(tg, length(${p.add(clean)}) + 2), '/', 1)) COLLATE "C" AS tag, count(DISTINCT ${source.counted})::int AS n
         FROM ${source.from}, unnest(${source.tags}) AS tg
        WHERE ${source.where} AND tg LIKE ${p.add(likePrefix(`${clean}/`))}
        GROUP BY 1 ORDER BY 2 DESC, 1`,
      p.values,
    )) as { tag: string; n: number }[];
    out[prefix] = Object.fromEntries(rows.map((x) => [x.tag, x.n]));
  }
  return out;
}
