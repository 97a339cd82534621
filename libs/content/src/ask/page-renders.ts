import { Gate } from '@kb/platform/concurrency';

/**
 * Bounds of the on-demand PDF page renders of /ask's page_image (docs/ask.md "Images"). Renders run
 * in the extraction sandbox, whose parser workers every tenant's processing shares, so one KB may
 * not hold more than `perKb` of them at once whatever its traffic, and a page rendered recently is
 * served from memory.
 */
export const PAGE_RENDER_LIMITS = {
  /** Renders one KB runs at once in this process (the sandbox has two parser workers for everyone). */
  perKb: 1,
  /** How long a page waits for its KB's turn before it is skipped (the answer goes on without it). */
  waitMs: 10_000,
  /** Bytes (base64) of rendered pages kept in memory, least recently used evicted first. */
  cacheBytes: 32 * 1024 * 1024,
} as const;

/** A rendered page: its media type and base64 bytes. */
export interface PageImage {
  mediaType: string;
  data: string;
}

/** The identity of a rendered page: a new write or processing of the field (`generation`) is another page. */
export interface PageKey {
  kbid: string;
  rid: string;
  fieldId: string;
  page: number;
  /** The field's write sequence and modification time: any reprocess or rewrite changes it. */
  generation: string;
}

const keyOf = (k: PageKey): string => JSON.stringify([k.kbid, k.rid, k.fieldId, k.page, k.generation]);

/**
 * A least-recently-used cache of rendered pages bounded by bytes. Keys carry the field's
 * generation, so a reprocessed field is never served an old render; an older generation's
 * entries are dropped when a newer one of the same page is stored, the rest age out.
 */
export class PageImageCache {
  private readonly entries = new Map<string, { image: PageImage; bytes: number; page: string }>();
  private held = 0;

  constructor(readonly budget: number = PAGE_RENDER_LIMITS.cacheBytes) {}

  get(key: PageKey): PageImage | undefined {
    const id = keyOf(key);
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    // Map order is insertion order: re-inserting makes it the most recently used.
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.image;
  }

  set(key: PageKey, image: PageImage): void {
    const bytes = image.data.length + image.mediaType.length;
    if (bytes > this.budget) return;
    const id = keyOf(key);
    const page = keyOf({ ...key, generation: '' });
    for (const [other, entry] of this.entries) if (entry.page === page) this.drop(other);
    this.entries.set(id, { image, bytes, page });
    this.held += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.held <= this.budget) break;
      this.drop(oldest);
    }
  }

  /** Bytes and entries held (metrics, tests). */
  get size(): { bytes: number; entries: number } {
    return { bytes: this.held, entries: this.entries.size };
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.held -= entry.bytes;
  }
}

/** Why a page was not rendered: its KB's renders were all busy for the whole wait. */
export class RenderBusy extends Error {
  constructor(readonly waitedMs: number) {
    super(`the KB's page renders stayed busy for ${waitedMs} ms`);
  }
}

/**
 * One gate per KB (`perKb` renders at once, the others waiting in order at most `waitMs`), made
 * when a KB first renders and dropped when it has nothing running or waiting, so idle KBs hold
 * nothing.
 */
export class PageRenderGates {
  private readonly gates = new Map<string, Gate>();

  constructor(
    readonly perKb: number = PAGE_RENDER_LIMITS.perKb,
    readonly waitMs: number = PAGE_RENDER_LIMITS.waitMs,
  ) {}

  /**
   * Runs `render` in the KB's turn. Throws RenderBusy when the turn did not come within `waitMs`,
   * and the caller's abort reason when `signal` aborts first.
   */
  async run<T>(kbid: string, render: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let gate = this.gates.get(kbid);
    if (!gate) this.gates.set(kbid, (gate = new Gate(this.perKb)));
    const timeout = AbortSignal.timeout(this.waitMs);
    const wait = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return await gate.run(render, { signal: wait });
    } catch (err) {
      if (timeout.aborted && !signal?.aborted && err === timeout.reason) throw new RenderBusy(this.waitMs);
      throw err;
    } finally {
      const { running, waiting } = gate.load;
      if (running === 0 && waiting === 0 && this.gates.get(kbid) === gate) this.gates.delete(kbid);
    }
  }

  /** The load of a KB's gate (tests, metrics). */
  load(kbid: string): { running: number; waiting: number } {
    return this.gates.get(kbid)?.load ?? { running: 0, waiting: 0 };
  }
}
