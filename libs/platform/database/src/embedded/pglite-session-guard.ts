import type { PGlite } from '@electric-sql/pglite';
import type { StatementProfile } from './statement-profile';

/*
 * Why this exists. pglite-socket 0.2.17 funnels every client connection into ONE PGlite session
 * through a single FIFO queue, one wire-protocol message per queue item. It keeps a client's
 * messages together only while `db.isInTransaction()` is true (an explicit BEGIN block). An
 * extended-protocol query (Parse, Bind, Describe, Execute, Sync: what `pg` sends for every
 * parameterised query) is not such a block, so when a client's messages arrive in several TCP
 * chunks (large parameters, e.g. vectors or documents), another client's Parse can land between
 * this client's Parse and Bind and replace the shared unnamed statement: wrong statement bound,
 * rows written with the other query, or "bind message supplies 2 parameters" errors.
 *
 * The guard wraps the PGlite instance handed to the socket server and reports "in a transaction"
 * from the first extended-protocol message until its Sync. The queue then serves only that
 * client until the sequence is complete, exactly as it already does for BEGIN ... COMMIT.
 */

const SYNC = 0x53; // 'S'
/** Parse, Bind, Describe, Execute, Close, Flush: they leave the sequence open until Sync. */
const OPENS_SEQUENCE = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]);
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);

/** Follows the frontend messages of one shared session to know whether a sequence is open. */
export class ExtendedProtocolTracker {
  private open = false;

  get isOpen(): boolean {
    return this.open;
  }

  /** `message` is one complete frontend message, as pglite-socket hands it to PGlite. */
  observe(message: Uint8Array): void {
    const type = message[0];
    if (type === SYNC) this.open = false;
    else if (type !== undefined && OPENS_SEQUENCE.has(type)) this.open = true;
  }

  reset(): void {
    this.open = false;
  }
}

/**
 * Returns a view of `db` for PGLiteSocketServer only. Everything else uses the real instance.
 * Methods are bound to the real instance because PGlite keeps its state in private fields.
 * With a `profile`, the time PGlite takes for each message is added to its statement.
 */
export function guardSharedSession(db: PGlite, profile?: StatementProfile): PGlite {
  const tracker = new ExtendedProtocolTracker();

  const overrides: Partial<Record<keyof PGlite, unknown>> = {
    isInTransaction: (): boolean => tracker.isOpen || db.isInTransaction(),
    execProtocolRawStream: (message: Uint8Array, options: Parameters<PGlite['execProtocolRawStream']>[1]) => {
      tracker.observe(message);
      if (!profile) return db.execProtocolRawStream(message, options);
      profile.observe(message);
      const started = performance.now();
      return db.execProtocolRawStream(message, options).finally(() => profile.record(performance.now() - started));
    },
    // pglite-socket calls exec('ROLLBACK') only when the client that owns the session disconnects.
    exec: async (sql: string, options?: Parameters<PGlite['exec']>[1]) => {
      if (db.closed) return [];
      if (tracker.isOpen) {
        // Close the departed client's half-sent sequence so the next client starts clean.
        await db.runExclusive(() => db.execProtocolRaw(SYNC_MESSAGE));
        tracker.reset();
      }
      if (!db.isInTransaction()) return [];
      return db.exec(sql, options);
    },
  };

  return new Proxy(db, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return overrides[prop as keyof PGlite];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
