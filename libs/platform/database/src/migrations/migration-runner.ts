import { MigrationExecutor, type DataSource, type QueryRunner } from 'typeorm';

/** The names of migrations applied to the DataSource's schema, oldest first. */
export async function executedMigrationNames(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async (runner) => {
    const executed = await new MigrationExecutor(dataSource, runner).getExecutedMigrations();
    return executed.sort((a, b) => a.timestamp - b.timestamp).map((m) => m.name);
  });
}

/** The names of migrations not yet applied, oldest first. */
export async function pendingMigrationNames(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async (runner) => {
    const pending = await new MigrationExecutor(dataSource, runner).getPendingMigrations();
    return pending.map((m) => m.name);
  });
}

/**
 * Applies every pending migration in one transaction and returns their names ([] when up to date).
 * Replicas starting together are serialised by an advisory lock, so each migration runs once.
 */
export async function runServiceMigrations(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async (runner) => {
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    const applied = await executor.executePendingMigrations();
    return applied.map((m) => m.name);
  });
}

/** Reverts the most recent migration; returns its name, or [] when nothing was applied. */
export async function revertLastMigration(dataSource: DataSource): Promise<string[]> {
  return withMigrationLock(dataSource, async (runner) => {
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    const before = new Set((await executor.getExecutedMigrations()).map((m) => m.name));
    if (before.size === 0) return [];
    await executor.undoLastMigration();
    for (const m of await executor.getExecutedMigrations()) before.delete(m.name);
    return [...before];
  });
}

/*
 * The lock and the migrations use the same connection: with a pool of one, a second connection
 * would wait forever for the first. On PGlite every connection is the same session, where
 * advisory locks are re-entrant, so the lock costs nothing there.
 */
async function withMigrationLock<T>(dataSource: DataSource, work: (runner: QueryRunner) => Promise<T>): Promise<T> {
  const key = `kb:migrations:${schemaOf(dataSource)}`;
  const runner = dataSource.createQueryRunner('master');
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
    try {
      return await work(runner);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    await runner.release();
  }
}

function schemaOf(dataSource: DataSource): string {
  return (dataSource.options as { schema?: string }).schema ?? 'public';
}
