import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/**
 * TypeORM's insert/update types reject `Record<string, unknown>` members (jsonb columns) although
 * it stores them fine; this is the one place that says so, instead of casts in every repository.
 */
export function asRow<T>(value: T | Partial<T>): QueryDeepPartialEntity<T> {
  return value as QueryDeepPartialEntity<T>;
}
