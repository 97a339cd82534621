import type { DataSource, ValueTransformer } from 'typeorm';
import { prepared, type PreparedStatement } from './prepared-query';

/** A statement reading an entity's selectable columns, and how to turn its rows into entities. */
export interface EntitySelect<T> {
  readonly statement: PreparedStatement;
  hydrate(row: Record<string, unknown>): T;
}

/**
 * Column types whose value the `pg` driver returns exactly as TypeORM would hydrate it (TypeORM
 * changes the others: `date` to a string, `simple-json` parsed, enums and hstore mapped...).
 */
const SAME_AS_TYPEORM = new Set([
  'uuid',
  'text',
  'varchar',
  'character varying',
  'jsonb',
  'json',
  'boolean',
  'timestamptz',
  'timestamp with time zone',
  'integer',
  'int',
  'int4',
  'smallint',
  'bigint',
  'double precision',
  'float8',
  'real',
]);

/**
 * `SELECT <every selectable column AS its property> FROM <the entity's table> <rest>` for
 * `preparedQuery`, with a `hydrate` that gives what TypeORM's `find` gives (an instance of the
 * entity, column transformers applied). For hot reads that TypeORM's query building and row
 * mapping would slow down; an entity with a column type outside the ones known to map the same
 * is refused when the statement is made, not answered differently.
 */
export function entitySelect<T>(ds: DataSource, entity: new () => T, rest: string): EntitySelect<T> {
  const meta = ds.getMetadata(entity);
  const columns = meta.columns.filter((c) => c.isSelect);
  for (const c of columns) {
    const type = typeof c.type === 'string' ? c.type : '';
    if (!SAME_AS_TYPEORM.has(type))
      throw new Error(`entitySelect: ${meta.name}.${c.propertyName} has type ${String(c.type)}, not mapped here`);
  }
  const list = columns.map((c) => `"${c.databaseName}" AS "${c.propertyName}"`).join(', ');
  const table = meta.schema ? `"${meta.schema}"."${meta.tableName}"` : `"${meta.tableName}"`;
  const transforms = columns.flatMap((c) => (c.transformer ? [{ key: c.propertyName, transformer: c.transformer }] : []));
  return {
    statement: prepared(`SELECT ${list} FROM ${table} ${rest}`),
    hydrate: (row) => {
      const out = Object.assign(new entity() as object, row) as Record<string, unknown>;
      for (const { key, transformer } of transforms) out[key] = transformFrom(transformer, out[key]);
      return out as T;
    },
  };
}

function transformFrom(transformer: ValueTransformer | ValueTransformer[], value: unknown): unknown {
  // TypeORM applies an array of transformers in reverse order when reading.
  if (!Array.isArray(transformer)) return transformer.from(value);
  return transformer.reduceRight((v, t) => t.from(v), value);
}
