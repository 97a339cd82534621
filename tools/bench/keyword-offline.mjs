// The keyword retriever of /find replayed offline on a BEIR data set, for fitting its constants
// without ingesting (SciFact through the service takes 20+ minutes; this takes one). It reads the
// service's own analyser from dist/ (run `node tools/scripts/build.mjs` first) and scores as
// keywordSearch does (libs/content/src/search/query/retrievers.ts): Okapi BM25 per paragraph,
// (1 − λ)·BM25(paragraph) + λ·R(resource) with R the resource's BM25F over its paragraphs; the top
// 100 paragraphs, documents in order of first appearance, nDCG@10 and Recall@100 as the retrieval
// benchmark computes them. A resource is what the benchmark creates: `--doc-mode separate` a title
// paragraph and the body's paragraphs (split on blank lines), `title-in-body` the body alone.
// Checked against the service (docs/benchmarks.md): the same nDCG@10 and Recall@100 to 0.001.
//
//   node tools/bench/keyword-offline.mjs --dataset scifact --splits dev,train --doc-mode separate --lambda 0,0.7
//     [--language en] [--subset <data dir of the retrieval benchmark: only the documents it ingested>]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { analyze, analyzeQuery } = createRequire(import.meta.url)(
  join(root, 'dist', 'libs', 'content', 'src', 'search', 'analysis', 'analyze.js'),
);
const { values: a } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    splits: { type: 'string', default: '' },
    'doc-mode': { type: 'string', default: 'separate' },
    lambda: { type: 'string', default: '0,0.7' },
    language: { type: 'string', default: 'en' },
    subset: { type: 'string' },
  },
});
const dir = join(process.env.BENCH_DATA ?? join(root, '..', 'shared', 'bench-data'), a.dataset);
const mode = a['doc-mode'];
if (mode !== 'separate' && mode !== 'title-in-body') throw new Error('--doc-mode is separate or title-in-body');
const lang = a.language;
const jsonl = (path) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const subset = a.subset ? new Set(Object.keys(JSON.parse(readFileSync(join(a.subset, 'bench-retrieval.json'), 'utf8')).slugs)) : null;
const docs = jsonl(join(dir, 'corpus.jsonl')).filter((d) => !subset || subset.has(d._id));

/** Paragraphs in creation order: { doc, tf, len }. */
const paras = [];
const blocks = (text) =>
  text
    .split(/\n[ \t]*\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
for (const d of docs) {
  const title = (d.title ?? '').trim();
  const text = (d.text ?? '').trim();
  const parts = mode === 'separate' ? [...(title ? [title] : []), ...blocks(text)] : blocks([title, text].filter(Boolean).join(' '));
  for (const p of parts) {
    const terms = analyze(p, lang);
    if (terms.length === 0) continue;
    const tf = new Map();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    paras.push({ doc: d._id, tf, len: terms.length });
  }
}
const N = paras.length;
const avgdl = paras.reduce((n, p) => n + p.len, 0) / N;
const postings = new Map();
paras.forEach((p, i) => {
  for (const [t, f] of p.tf) {
    if (!postings.has(t)) postings.set(t, []);
    postings.get(t).push([i, f]);
  }
});
const k1 = 1.2;
const b = 0.75;
const c1 = k1 * (1 - b);
const c2 = (k1 * b) / Math.max(avgdl, 1);

function ranked(query, lambda) {
  const own = new Map();
  const resource = new Map();
  for (const t of [...new Set(analyzeQuery(query, [lang]))].sort()) {
    const list = postings.get(t);
    if (!list) continue;
    const w = Math.log(1 + (N - list.length + 0.5) / (list.length + 0.5)) * (k1 + 1);
    const perResource = new Map();
    for (const [i, f] of list) {
      const len = paras[i].len;
      own.set(i, (own.get(i) ?? 0) + (w * f) / (f + c1 + c2 * len));
      perResource.set(paras[i].doc, (perResource.get(paras[i].doc) ?? 0) + (k1 * f) / (c1 + c2 * len));
    }
    for (const [r, T] of perResource) resource.set(r, (resource.get(r) ?? 0) + (w * T) / (k1 + T));
  }
  const scored = [...own].map(([i, s]) => [i, (1 - lambda) * s + lambda * resource.get(paras[i].doc)]);
  scored.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  const out = [];
  for (const [i] of scored.slice(0, 100)) if (!out.includes(paras[i].doc)) out.push(paras[i].doc);
  return out;
}

function evaluate(split, lambda) {
  const queries = jsonl(join(dir, split ? `queries.${split}.jsonl` : 'queries.jsonl'));
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
  let ndcg = 0;
  let recall = 0;
  let n = 0;
  for (const q of queries) {
    const judged = qrels.get(q._id);
    const relevant = judged ? [...judged].filter(([, g]) => g > 0) : [];
    if (relevant.length === 0) continue;
    const docs = ranked(q.text, lambda);
    let dcg = 0;
    docs.slice(0, 10).forEach((d, i) => (dcg += (judged.get(d) ?? 0) / Math.log2(i + 2)));
    let ideal = 0;
    relevant
      .map(([, g]) => g)
      .sort((x, y) => y - x)
      .slice(0, 10)
      .forEach((g, i) => (ideal += g / Math.log2(i + 2)));
    ndcg += dcg / ideal;
    recall += relevant.filter(([d]) => docs.includes(d)).length / relevant.length;
    n++;
  }
  return `${(ndcg / n).toFixed(4)} / ${(recall / n).toFixed(3)} (${n} q)`;
}

console.log(
  `${a.dataset} (${mode}${subset ? `, the ${docs.length} docs of ${a.subset}` : ''}): ${docs.length} docs, ${N} paragraphs; nDCG@10 / Recall@100`,
);
for (const lambda of a.lambda.split(',').map(Number)) {
  const cells = (a.splits ? a.splits.split(',') : ['']).map((s) => `${s || 'all'} ${evaluate(s, lambda)}`);
  console.log(`λ = ${lambda}: ${cells.join(' | ')}`);
}
