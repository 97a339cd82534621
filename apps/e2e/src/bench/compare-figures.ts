/**
 * The figures of a benchmark's JSON output, flattened to named numbers, and the side-by-side
 * summary of two commits' runs (B / A per round, then the median ratio and its spread).
 */

/** One named figure per number in a benchmark's output: `rows[topology=standalone].p50_ms` → 13. */
export type Figures = Record<string, number>;

/** Members that describe a run rather than measure it: never compared. */
const NOT_FIGURES = new Set(['date', 'seconds', 'connections', 'duration_s', 'runs', 'rounds']);

/**
 * Names each number by its path. Array elements that are objects are named by their text members
 * and their connection count (`[topology=standalone,connections=8]`), so rows stay matched across
 * runs whatever their order; other elements by their index.
 */
export function flatten(value: unknown, path = '', out: Figures = {}): Figures {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) out[path] = value;
    return out;
  }
  if (Array.isArray(value)) {
    const seen = new Map<string, number>();
    value.forEach((item, i) => {
      let key = String(i);
      if (item && typeof item === 'object' && !Array.isArray(item)) {
        // A row's connection count names it too: one benchmark's rows at 1 and 16 connections, or
        // an older commit's single row at 16, are matched by it, never by their order.
        const labels = Object.entries(item as Record<string, unknown>).filter(
          ([k, v]) => typeof v === 'string' || typeof v === 'boolean' || (k === 'connections' && typeof v === 'number'),
        );
        if (labels.length > 0) {
          key = labels.map(([k, v]) => `${k}=${String(v)}`).join(',');
          const n = (seen.get(key) ?? 0) + 1;
          seen.set(key, n);
          if (n > 1) key = `${key}#${n}`;
        }
      }
      flatten(item, `${path}[${key}]`, out);
    });
    return out;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (NOT_FIGURES.has(k)) continue;
      flatten(v, path ? `${path}.${k}` : k, out);
    }
  }
  return out;
}

export interface ComparedFigure {
  figure: string;
  /** Median of A's runs, of B's runs. */
  a: number;
  b: number;
  /** Median of the per-round ratios B / A, and their smallest and largest. */
  ratio: number;
  min: number;
  max: number;
  /** Which way is better, guessed from the name: `higher`, `lower`, or `?`. */
  better: 'higher' | 'lower' | '?';
}

export function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  const at = (i: number): number => s[i] ?? Number.NaN;
  return s.length % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

export function betterWay(figure: string): ComparedFigure['better'] {
  const name = figure.slice(figure.lastIndexOf('.') + 1).toLowerCase();
  if (/(per_s|_rate|rate$|ndcg|recall|mrr|precision|throughput|auc|hits|speedup)/.test(name)) return 'higher';
  if (/(_ms|ms$|latency|bytes|rss|_mb|mb$|heap|errors|non_2xx|seconds_total|_s$)/.test(name)) return 'lower';
  return '?';
}

/**
 * Pairs round i of A with round i of B (they ran back to back, so they share the machine's mood of
 * the moment). Figures that are the same number in every run (sizes, counts set by the arguments)
 * measure nothing and are left out, as are figures missing from any run.
 */
export function summarise(a: Figures[], b: Figures[]): ComparedFigure[] {
  const rounds = Math.min(a.length, b.length);
  const names = Object.keys(a[0] ?? {}).filter((k) => a.slice(0, rounds).every((f) => k in f) && b.slice(0, rounds).every((f) => k in f));
  const rows: ComparedFigure[] = [];
  for (const figure of names) {
    const av = a.slice(0, rounds).map((f) => f[figure] ?? Number.NaN);
    const bv = b.slice(0, rounds).map((f) => f[figure] ?? Number.NaN);
    if ([...av, ...bv].every((v) => v === av[0])) continue;
    const ratios = av.map((x, i) => {
      const y = bv[i] ?? Number.NaN;
      return x === 0 ? (y === 0 ? 1 : Number.POSITIVE_INFINITY) : y / x;
    });
    rows.push({
      figure,
      a: median(av),
      b: median(bv),
      ratio: median(ratios),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      better: betterWay(figure),
    });
  }
  return rows;
}

const num = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toPrecision(3));

/** A plain-text table: figure, A, B, B/A (min–max), and which way is better. */
export function formatTable(rows: ComparedFigure[]): string {
  const header = ['figure', 'A (median)', 'B (median)', 'B / A', 'per round', 'better'];
  const lines = [
    header,
    ...rows.map((r) => [r.figure, num(r.a), num(r.b), `${r.ratio.toFixed(2)}×`, `${r.min.toFixed(2)}–${r.max.toFixed(2)}`, r.better]),
  ];
  const widths = header.map((_, c) => Math.max(...lines.map((l) => (l[c] ?? '').length)));
  return lines
    .map((l) => l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '))
    .join('\n');
}
