import type { DataSource, EntityManager } from 'typeorm';

/** The exploration's time ran out during (or before) a step: the hops reached by then are used. */
export class GraphBudgetSpent extends Error {
  constructor() {
    super('graph_beta: the exploration time budget is spent');
  }
}

/** PostgreSQL's `query_canceled` (a statement past statement_timeout). */
const QUERY_CANCELED = '57014';
/** Past the statement timeout, how long the answer still waits for the database to give the statement up. */
const CANCEL_GRACE_MS = 250;

/**
 * Runs one step of the exploration's queries within what is left of its time (`remainingMs`): in
 * a transaction whose statements PostgreSQL cancels past that time (`statement_timeout`, local to
 * the transaction), and never waited for much longer than that (a database that does not enforce
 * the timeout stops holding the answer up all the same; its statement finishes on its own, bounded
 * by the step's row limits). Throws GraphBudgetSpent when the time is spent, the caller's abort
 * reason when `signal` aborts, and any other failure as it is.
 */
export async function withinBudget<T>(
  ds: DataSource,
  remainingMs: number,
  work: (m: EntityManager) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  signal?.throwIfAborted();
  if (!(remainingMs >= 1)) throw new GraphBudgetSpent();
  const ms = Math.ceil(remainingMs);
  const run = ds.transaction(async (m) => {
    await m.query(`SELECT set_config('statement_timeout', $1, true)`, [String(ms)]);
    return work(m);
  });
  // Whichever settles first decides; the other's outcome is dropped (never an unhandled rejection).
  run.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GraphBudgetSpent()), ms + CANCEL_GRACE_MS);
    onAbort = () => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  stop.catch(() => undefined);
  try {
    return await Promise.race([
      run.catch((err: unknown) => {
        const e = err as { code?: string; driverError?: { code?: string } };
        throw (e.code ?? e.driverError?.code) === QUERY_CANCELED ? new GraphBudgetSpent() : err;
      }),
      stop,
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
