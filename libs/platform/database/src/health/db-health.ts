import type { DataSource } from 'typeorm';

export const DEFAULT_DB_HEALTH_TIMEOUT_MS = 1000;

/**
 * `SELECT 1` within `timeoutMs`: false when the pool is closed, the server is down, or the query
 * waits too long (on PGlite, behind a long transaction). Never throws, so readiness stays simple.
 */
export async function dbHealthCheck(dataSource: DataSource, timeoutMs = DEFAULT_DB_HEALTH_TIMEOUT_MS): Promise<boolean> {
  if (!dataSource.isInitialized) return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = dataSource.query('SELECT 1 AS ok').then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The `{ name, check }` shape readiness endpoints take, e.g. `databaseHealthCheck('content-db', ds)`. */
export function databaseHealthCheck(
  name: string,
  dataSource: DataSource,
  timeoutMs = DEFAULT_DB_HEALTH_TIMEOUT_MS,
): { name: string; check(): Promise<boolean> } {
  return { name, check: () => dbHealthCheck(dataSource, timeoutMs) };
}
