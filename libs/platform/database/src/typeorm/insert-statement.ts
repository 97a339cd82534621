import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

/** Rows for one table of a combined insert. */
export interface InsertPart<T extends ObjectLiteral = ObjectLiteral> {
  target: EntityTarget<T>;
  rows: T[];
}

/**
 * ONE statement inserting rows into several tables (each table's insert is a data-modifying CTE),
 * with values converted as TypeORM would (json columns serialised, transformers applied, column
 * defaults where a property is undefined).
 *
 * Why: a single statement is atomic without BEGIN/COMMIT, so a write that only inserts costs one
 * round trip instead of one per table plus two. On the embedded database, which runs one session
 * for every connection, a transaction holds that session through all its round trips; one
 * statement holds it for the shortest time possible.
 */
export function insertStatement(ds: DataSource, parts: InsertPart[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const inserts: string[] = [];
  for (const part of parts) {
    if (part.rows.length === 0) continue;
    const meta = ds.getMetadata(part.target);
    const columns = meta.columns.filter((c) => c.isInsert && !c.isVirtual);
    const table = meta.schema ? `"${meta.schema}"."${meta.tableName}"` : `"${meta.tableName}"`;
    const tuples = part.rows.map((row) => {
      const values = columns.map((c) => {
        const value = c.getEntityValue(row);
        if (value === undefined) return 'DEFAULT';
        params.push(ds.driver.preparePersistentValue(value, c));
        return `$${params.length}`;
      });
      return `(${values.join(', ')})`;
    });
    inserts.push(`INSERT INTO ${table} (${columns.map((c) => `"${c.databaseName}"`).join(', ')}) VALUES ${tuples.join(', ')}`);
  }
  if (inserts.length === 0) throw new Error('insertStatement: no rows');
  const last = inserts.pop() as string;
  const before = inserts.map((s, i) => `i${i} AS (${s})`);
  return { sql: before.length > 0 ? `WITH ${before.join(', ')} ${last}` : last, params };
}
