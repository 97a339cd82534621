import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';

export interface TransactionOptions {
  isolationLevel?: IsolationLevel;
}

/**
 * Runs `work` in one transaction on one pooled connection: commits when it resolves, rolls back
 * and rethrows when it throws. Use only the given manager inside: on PGlite any other connection
 * (this DataSource's pool, another service's DataSource, the bus waiting for another service
 * that queries) waits until this transaction ends, so awaiting it here never returns.
 */
export async function withTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const runner = dataSource.createQueryRunner('master');
  await runner.connect();
  try {
    await runner.startTransaction(options.isolationLevel);
    try {
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (err) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      throw err;
    }
  } finally {
    await runner.release();
  }
}
