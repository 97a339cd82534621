/** Hits picked from a scored list: ordinals with their scores, best first. */
export interface Picked {
  hits: { ord: number; score: number }[];
  /** How many entries passed the predicate (all of them, not only those picked). */
  passing: number;
}

/** `a` ranks before `b` (the SQL statement's ORDER BY). */
export type Before = (a: number, b: number) => boolean;

/**
 * The best `k` ordinals of `ords` that pass `pred`, in order, without sorting them all: a heap
 * holds the k best so far (its root the worst of them).
 */
export function pick(
  ords: ArrayLike<number>,
  count: number,
  scores: Float64Array,
  k: number,
  before: Before,
  pred: (ord: number) => boolean,
): Picked {
  const heap: number[] = [];
  let passing = 0;
  // root = the entry ranked last among the kept
  const worse = (a: number, b: number) => before(b, a);
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!worse(heap[i] as number, heap[parent] as number)) break;
      [heap[i], heap[parent]] = [heap[parent] as number, heap[i] as number];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l] as number, heap[m] as number)) m = l;
      if (r < heap.length && worse(heap[r] as number, heap[m] as number)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as number, heap[i] as number];
      i = m;
    }
  };
  for (let i = 0; i < count; i++) {
    const o = ords[i] as number;
    if (!pred(o)) continue;
    passing++;
    if (k <= 0) continue;
    if (heap.length < k) {
      heap.push(o);
      up(heap.length - 1);
    } else if (before(o, heap[0] as number)) {
      heap[0] = o;
      down(0);
    }
  }
  heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  return { hits: heap.map((o) => ({ ord: o, score: scores[o] as number })), passing };
}

/** The parts one after the other, in one array. */
export function concat<T extends Int32Array | Float64Array>(parts: T[], make: new (n: number) => T): T {
  const out = new make(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `score >= min` as PostgreSQL compares float8 (NaN above everything). */
export function atLeast(score: number, min: number): boolean {
  return Number.isNaN(score) || score >= min;
}
