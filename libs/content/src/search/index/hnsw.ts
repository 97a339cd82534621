import type { EntityManager } from 'typeorm';

/**
 * HNSW indexes seen committed, per database. A name goes in only once the catalog shows it:
 * an index created in a transaction that then rolls back is created again by the next write.
 * (`CREATE INDEX IF NOT EXISTS` locks the table against writers even when the index exists, so it
 * is not run on every write.)
 */
const hnswSeen = new WeakMap<object, Set<string>>();

export function hnswIndexName(vectorset: string, dimension: number): string {
  return `search_vectors_hnsw_${vectorset
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40)}_${dimension}`;
}

/** Creates the HNSW index of a vectorset and dimension unless it is known to exist (committed). */
export async function ensureHnsw(m: EntityManager, vectorset: string, dimension: number, similarity: 'COSINE' | 'DOT'): Promise<void> {
  const name = hnswIndexName(vectorset, dimension);
  let seen = hnswSeen.get(m.connection);
  if (!seen) hnswSeen.set(m.connection, (seen = new Set()));
  if (seen.has(name)) return;
  // The index's catalog row, and whether this very transaction wrote it (not yet committed).
  const found = (await m.query(
    `SELECT c.xmin::text = coalesce((txid_current_if_assigned() % 4294967296)::text, '') AS mine FROM pg_class c WHERE c.oid = to_regclass($1)`,
    [`content.${name}`],
  )) as { mine: boolean }[];
  if (found[0]) {
    if (!found[0].mine) seen.add(name);
    return;
  }
  const ops = similarity === 'COSINE' ? 'vector_cosine_ops' : 'vector_ip_ops';
  // Partial expression index: one per vectorset and length, so KBs with different models share the table.
  await m.query(
    `CREATE INDEX IF NOT EXISTS ${name} ON content.search_vectors USING hnsw ((vector::vector(${dimension})) ${ops}) WITH (m = 16, ef_construction = 100)
      WHERE vectorset = '${vectorset}' AND dimension = ${dimension}`,
  );
}
