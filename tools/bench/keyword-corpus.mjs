// What the offline keyword tools (keyword-offline.mjs, keyword-evidence.mjs) share: a BEIR set read
// from the bench data as the retrieval benchmark ingests it, the service's own analyser from dist/
// (run `node tools/scripts/build.mjs` first), and nDCG@10 / Recall@100 as the benchmark computes them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The service's analyser: `analyze(text, language)` and `analyzeQuery(query, languages)`. */
export const analysis = createRequire(import.meta.url)(join(root, 'dist', 'libs', 'content', 'src', 'search', 'analysis', 'analyze.js'));

export const dataDir = (dataset) => join(process.env.BENCH_DATA ?? join(root, '..', 'shared', 'bench-data'), dataset);

export const jsonl = (path) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/** The slugs a retrieval benchmark's data dir ingested, or null for the whole set. */
export const subsetOf = (benchDir) =>
  benchDir ? new Set(Object.keys(JSON.parse(readFileSync(join(benchDir, 'bench-retrieval.json'), 'utf8')).slugs)) : null;

const blocks = (text) =>
  text
    .split(/\n[ \t]*\n+/)
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Paragraphs in creation order, as the benchmark creates resources: `separate` a title paragraph and
 * the body's paragraphs (split on blank lines), `title-in-body` the body alone with the title in front.
 * Each: { doc, kind (title | body), terms (analysed, in order), tf (term → count), len }.
 */
export function paragraphs(dir, { mode, language, subset }) {
  if (mode !== 'separate' && mode !== 'title-in-body') throw new Error('--doc-mode is separate or title-in-body');
  const out = [];
  for (const d of jsonl(join(dir, 'corpus.jsonl'))) {
    if (subset && !subset.has(d._id)) continue;
    const title = (d.title ?? '').trim();
    const text = (d.text ?? '').trim();
    const parts =
      mode === 'separate'
        ? [...(title ? [['title', title]] : []), ...blocks(text).map((p) => ['body', p])]
        : blocks([title, text].filter(Boolean).join(' ')).map((p) => ['body', p]);
    for (const [kind, p] of parts) {
      const terms = analysis.analyze(p, language);
      if (terms.length === 0) continue;
      const tf = new Map();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      out.push({ doc: d._id, kind, terms, tf, len: terms.length });
    }
  }
  return out;
}

/** A split's queries with at least one relevant judged document: { id, text, judged (doc → grade) }. */
export function judgedQueries(dir, split, subset) {
  const qrels = new Map();
  const lines = readFileSync(join(dir, split ? `qrels.${split}.tsv` : 'qrels.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1);
  for (const line of lines) {
    const [q, d, g] = line.split('\t');
    if (subset && !subset.has(d)) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q).set(d, Number(g));
  }
  return jsonl(join(dir, split ? `queries.${split}.jsonl` : 'queries.jsonl'))
    .map((q) => ({ id: q._id, text: q.text, judged: qrels.get(q._id) }))
    .filter((q) => q.judged && [...q.judged.values()].some((g) => g > 0));
}

/** [nDCG@10 (linear gains), Recall@100] of a ranked list of documents. */
export function judge(judged, docs) {
  let dcg = 0;
  docs.slice(0, 10).forEach((d, i) => (dcg += (judged.get(d) ?? 0) / Math.log2(i + 2)));
  const gains = [...judged.values()].filter((g) => g > 0).sort((x, y) => y - x);
  let ideal = 0;
  gains.slice(0, 10).forEach((g, i) => (ideal += g / Math.log2(i + 2)));
  const relevant = [...judged].filter(([, g]) => g > 0);
  const top = new Set(docs.slice(0, 100));
  return [dcg / ideal, relevant.filter(([d]) => top.has(d)).length / relevant.length];
}

const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** One cell: "dev 0.6810 / 0.897 +0.0180 ± 0.0082", the gain over `base` query by query (paired). */
export function cell(split, rows, base) {
  const diff = rows.map(([n], i) => n - base[i][0]);
  const m = mean(diff);
  const se = Math.sqrt(mean(diff.map((x) => (x - m) ** 2)) / diff.length);
  const gain = `${m >= 0 ? '+' : ''}${m.toFixed(4)} ± ${se.toFixed(4)}`;
  return `${split || 'all'} ${mean(rows.map((r) => r[0])).toFixed(4)} / ${mean(rows.map((r) => r[1])).toFixed(3)} ${gain}`;
}
