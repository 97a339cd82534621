import { readFileSync } from 'node:fs';

/**
 * Retrieval metrics with trec_eval semantics (what BEIR reports through pytrec_eval) and readers for
 * BEIR files. Grades are linear gains; a document is relevant when its grade is above 0; a query
 * without any relevant document is not evaluated (it would divide by zero, trec_eval drops it too).
 */

/** query id → (document id → graded relevance); grade 0 means judged not relevant. */
export type Qrels = Map<string, Map<string, number>>;

export interface BeirDoc {
  _id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  _id: string;
  text: string;
}

/** Keeps the first occurrence of each id: a document retrieved twice counts once, at its best rank. */
function firstOccurrences(ranking: readonly string[], k: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of ranking) {
    if (out.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

const relevantGrades = (judged: ReadonlyMap<string, number>): number[] => [...judged.values()].filter((g) => g > 0);

/** nDCG@k: DCG = Σ gain / log2(rank + 1) over the top k (rank from 1), ideal DCG from every relevant judged document. */
export function ndcgAtK(ranking: readonly string[], judged: ReadonlyMap<string, number>, k: number): number | undefined {
  const ideal = relevantGrades(judged)
    .sort((a, b) => b - a)
    .slice(0, k);
  if (ideal.length === 0) return undefined;
  const discount = (i: number) => Math.log2(i + 2);
  const idcg = ideal.reduce((sum, g, i) => sum + g / discount(i), 0);
  const dcg = firstOccurrences(ranking, k).reduce((sum, id, i) => sum + Math.max(judged.get(id) ?? 0, 0) / discount(i), 0);
  return dcg / idcg;
}

/** Recall@k = |relevant ∩ top k| / |relevant|. */
export function recallAtK(ranking: readonly string[], judged: ReadonlyMap<string, number>, k: number): number | undefined {
  const relevant = [...judged].filter(([, g]) => g > 0).length;
  if (relevant === 0) return undefined;
  const found = firstOccurrences(ranking, k).filter((id) => (judged.get(id) ?? 0) > 0).length;
  return found / relevant;
}

export interface Evaluation {
  ndcg: number;
  recall: number;
  /** Queries that counted: in the run and with at least one relevant document. */
  queries: number;
}

/**
 * Means over the queries of `rankings` that have a relevant document. A query that was run and
 * retrieved nothing must be present with an empty ranking: it then scores 0 instead of vanishing.
 */
export function evaluate(rankings: ReadonlyMap<string, readonly string[]>, qrels: Qrels, ks: { ndcg: number; recall: number }): Evaluation {
  let ndcg = 0;
  let recall = 0;
  let queries = 0;
  for (const [qid, ranking] of rankings) {
    const judged = qrels.get(qid);
    if (!judged) continue;
    const n = ndcgAtK(ranking, judged, ks.ndcg);
    const r = recallAtK(ranking, judged, ks.recall);
    if (n === undefined || r === undefined) continue;
    ndcg += n;
    recall += r;
    queries++;
  }
  return queries === 0 ? { ndcg: 0, recall: 0, queries: 0 } : { ndcg: ndcg / queries, recall: recall / queries, queries };
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples; 0 for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? 0;
}

/** One JSON object per non-empty line; a bad line fails with its file and line number. */
export function readJsonl(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter(({ line }) => line.length > 0)
    .map(({ line, n }) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (err) {
        throw new Error(`${path}:${n}: not JSON (${(err as Error).message})`);
      }
    });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const idOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

/** BEIR `corpus.jsonl`: `{_id, title, text}` (extra members such as `metadata` are ignored). */
export function readCorpus(path: string, limit = Infinity): BeirDoc[] {
  const docs: BeirDoc[] = [];
  for (const [i, row] of readJsonl(path).entries()) {
    if (docs.length >= limit) break;
    const id = isRecord(row) ? idOf(row['_id']) : undefined;
    if (!isRecord(row) || id === undefined) throw new Error(`${path}: entry ${i + 1} has no _id`);
    docs.push({
      _id: id,
      title: typeof row['title'] === 'string' ? row['title'] : '',
      text: typeof row['text'] === 'string' ? row['text'] : '',
    });
  }
  return docs;
}

/** BEIR `queries*.jsonl`: `{_id, text}`. */
export function readQueries(path: string): BeirQuery[] {
  return readJsonl(path).map((row, i) => {
    const id = isRecord(row) ? idOf(row['_id']) : undefined;
    if (!isRecord(row) || id === undefined || typeof row['text'] !== 'string')
      throw new Error(`${path}: entry ${i + 1} needs _id and text`);
    return { _id: id, text: row['text'] };
  });
}

/** BEIR `qrels*.tsv`: optional header `query-id corpus-id score`, then tab-separated judged pairs. */
export function readQrels(path: string): Qrels {
  const qrels: Qrels = new Map();
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || (i === 0 && /^query-id\s/i.test(line))) return;
    const cols = line.split(/\s+/);
    // Also accept TREC's four columns: query-id, iteration (ignored), corpus-id, score.
    const [qid, docid, score] = cols.length === 4 ? [cols[0], cols[2], cols[3]] : cols;
    const grade = Number(score);
    if (cols.length < 3 || cols.length > 4 || !qid || !docid || !Number.isFinite(grade))
      throw new Error(`${path}:${i + 1}: expected "query-id corpus-id score"`);
    let judged = qrels.get(qid);
    if (!judged) qrels.set(qid, (judged = new Map()));
    judged.set(docid, grade);
  });
  return qrels;
}
