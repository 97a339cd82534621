import type { StreamName } from '@kb/contracts';
import { nanos, RetentionPolicy, StorageType, type JetStreamManager } from 'nats';
import { describeError, type BusLogger } from '../shared/bus-logger';

const STREAM_NOT_FOUND = 10059;
/**
 * Tries to get subjects onto a stream. A stream update replaces the whole list and JetStream has no
 * compare-and-set for it, so processes widening one stream at once can drop each other's subjects;
 * each try re-reads the list (apps declaring every stream's full list at connect never collide).
 */
const WIDEN_ATTEMPTS = 10;

function isStreamNotFound(err: unknown): boolean {
  const apiError = (err as { api_error?: { err_code?: number } } | undefined)?.api_error;
  return apiError?.err_code === STREAM_NOT_FOUND || (err instanceof Error && /stream not found/i.test(err.message));
}

/**
 * Creates and widens JetStream streams on demand. Stream subjects are always exact subjects:
 * a wildcard could capture an RPC subject, and JetStream would then answer requests with a PubAck.
 */
export class JetStreamStreams {
  private readonly covered = new Map<string, Set<string>>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly prefix: string,
    private readonly maxAgeMs: number,
    private readonly logger: BusLogger,
    /** Copies of each stream it creates; an existing stream keeps its own (change it with the NATS CLI). */
    private readonly replicas = 1,
  ) {}

  streamName(stream: StreamName): string {
    return this.prefix + stream;
  }

  /** Makes sure the stream exists and lists `subject` (already prefixed). */
  async ensure(stream: StreamName, subjects: string[]): Promise<void> {
    const name = this.streamName(stream);
    const known = this.covered.get(name) ?? new Set<string>();
    this.covered.set(name, known);
    if (subjects.every((s) => known.has(s))) return;
    // One update at a time per stream inside this process; other processes are handled by re-reading.
    const previous = this.locks.get(name) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.widen(name, subjects, known));
    this.locks.set(name, next);
    await next;
  }

  /**
   * Called after a JetStream operation on `subjects` failed: when the stream no longer lists one of
   * them (another process replaced the list with one read before ours was written), adds them back
   * and answers true so the caller can try again; answers false when the stream is intact.
   */
  async repair(stream: StreamName, subjects: string[]): Promise<boolean> {
    const name = this.streamName(stream);
    const current = await this.currentSubjects(name);
    if (current !== undefined && subjects.every((s) => current.includes(s))) return false;
    this.logger.warn('A JetStream stream lost subjects this process uses; adding them again', {
      stream: name,
      subjects: subjects.filter((s) => !current?.includes(s)),
    });
    this.covered.set(name, new Set(current ?? []));
    await this.ensure(stream, subjects);
    return true;
  }

  private async widen(name: string, subjects: string[], known: Set<string>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const current = await this.currentSubjects(name);
        if (current === undefined) {
          await this.jsm.streams.add({
            name,
            subjects: [...new Set([...known, ...subjects])],
            retention: RetentionPolicy.Limits,
            storage: StorageType.File,
            max_age: nanos(this.maxAgeMs),
            duplicate_window: nanos(Math.min(120_000, this.maxAgeMs)),
            num_replicas: this.replicas,
          });
        } else {
          const missing = subjects.filter((s) => !current.includes(s));
          if (missing.length > 0) await this.jsm.streams.update(name, { subjects: [...current, ...missing] });
        }
        // Re-read: another process may have replaced the subject list at the same moment.
        const after = (await this.currentSubjects(name)) ?? [];
        if (subjects.every((s) => after.includes(s))) {
          for (const s of after) known.add(s);
          return;
        }
      } catch (err) {
        if (attempt >= WIDEN_ATTEMPTS) throw err;
        this.logger.warn('Updating a JetStream stream failed; retrying', { stream: name, err: describeError(err) });
      }
      if (attempt >= WIDEN_ATTEMPTS) throw new Error(`Could not add subjects to stream ${name}`);
      // A random pause: processes that overwrote each other's lists do not write again in step.
      await new Promise((resolve) => setTimeout(resolve, (20 + Math.random() * 80) * attempt));
    }
  }

  private async currentSubjects(name: string): Promise<string[] | undefined> {
    try {
      const info = await this.jsm.streams.info(name);
      return info.config.subjects ?? [];
    } catch (err) {
      if (isStreamNotFound(err)) return undefined;
      throw err;
    }
  }
}
