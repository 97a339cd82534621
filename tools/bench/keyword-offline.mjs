// The keyword retriever of /find replayed offline on a BEIR data set, for trying scoring variants
// without ingesting (SciFact through the service takes 20+ minutes; this takes a minute). It reads
// the service's own analyser from dist/ (run `node tools/scripts/build.mjs` first) and scores as
// keywordSearch does (libs/content/src/search/query/retrievers.ts): Okapi BM25 per paragraph, the
// top 100 paragraphs, documents in order of first appearance, nDCG@10 and Recall@100 as the
// retrieval benchmark computes them. A resource is what the benchmark creates: `--doc-mode separate`
// a title paragraph and the body's paragraphs (split on blank lines), `title-in-body` the body alone.
// Checked against the service (docs/benchmarks.md): the same nDCG@10 and Recall@100 to 0.001.
//
// Each variant (keyword-variants.mjs) scores a resource from its paragraphs; that score goes to the
// resource's best paragraph only (its other paragraphs keep their own BM25), except `every`, the
// reverted first attempt, which gives every paragraph its resource's share. Every variant is
// compared with `bm25` (today: paragraphs alone) query by query: the mean gain and its standard error.
//
//   node tools/bench/keyword-offline.mjs --dataset scifact --splits dev,train --doc-mode separate \
//     --variants bm25,every:0.5,best:0.5,missing:0.5 [--language en] [--per-query <file.json>]
//     [--subset <data dir of the retrieval benchmark: only the documents it ingested>]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VARIANTS } from './keyword-variants.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { analyze, analyzeQuery } = createRequire(import.meta.url)(
  join(root, 'dist', 'libs', 'content', 'src', 'search', 'analysis', 'analyze.js'),
);
const { values: a } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    splits: { type: 'string', default: '' },
    'doc-mode': { type: 'string', default: 'separate' },
    variants: { type: 'string', default: 'bm25,every:0.5,best:0.5' },
    language: { type: 'string', default: 'en' },
    subset: { type: 'string' },
    'per-query': { type: 'string' },
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

/** Paragraphs in creation order: { doc, kind (title | body), tf, len }. */
const paras = [];
const blocks = (text) =>
  text
    .split(/\n[ \t]*\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
for (const d of docs) {
  const title = (d.title ?? '').trim();
  const text = (d.text ?? '').trim();
  const parts =
    mode === 'separate'
      ? [...(title ? [['title', title]] : []), ...blocks(text).map((p) => ['body', p])]
      : blocks([title, text].filter(Boolean).join(' ')).map((p) => ['body', p]);
  for (const [kind, p] of parts) {
    const terms = analyze(p, lang);
    if (terms.length === 0) continue;
    const tf = new Map();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    paras.push({ doc: d._id, kind, tf, len: terms.length });
  }
}
const N = paras.length;
const postings = new Map();
const docLength = new Map();
const kindLength = { title: [0, 0], body: [0, 0] };
paras.forEach((p, i) => {
  for (const [t, f] of p.tf) {
    if (!postings.has(t)) postings.set(t, []);
    postings.get(t).push([i, f]);
  }
  docLength.set(p.doc, (docLength.get(p.doc) ?? 0) + p.len);
  kindLength[p.kind][0] += p.len;
  kindLength[p.kind][1]++;
});
const stats = {
  N,
  docs: docLength.size,
  avgdl: paras.reduce((n, p) => n + p.len, 0) / N,
  avgDoc: [...docLength.values()].reduce((x, y) => x + y, 0) / docLength.size,
  avgKind: { title: kindLength.title[0] / Math.max(kindLength.title[1], 1), body: kindLength.body[0] / Math.max(kindLength.body[1], 1) },
  docLength,
  k1: 1.2,
  b: 0.75,
};

/** What a variant sees of one query: its terms (idf), and per matching resource its matching paragraphs. */
function matches(query) {
  const terms = [];
  const byDoc = new Map();
  for (const t of [...new Set(analyzeQuery(query, [lang]))].sort()) {
    const list = postings.get(t);
    if (!list) continue;
    const q = terms.length;
    terms.push({ idf: Math.log(1 + (N - list.length + 0.5) / (list.length + 0.5)), df: list.length });
    for (const [i, f] of list) {
      const d = paras[i].doc;
      if (!byDoc.has(d)) byDoc.set(d, new Map());
      const hit = byDoc.get(d);
      if (!hit.has(i)) hit.set(i, { i, kind: paras[i].kind, len: paras[i].len, f: [] });
      hit.get(i).f.push([q, f]);
    }
  }
  const c1 = stats.k1 * (1 - stats.b);
  const c2 = (stats.k1 * stats.b) / Math.max(stats.avgdl, 1);
  const resources = [];
  for (const [doc, hit] of byDoc) {
    const ps = [...hit.values()];
    for (const p of ps) p.own = p.f.reduce((s, [q, f]) => s + (terms[q].idf * (stats.k1 + 1) * f) / (f + c1 + c2 * p.len), 0);
    resources.push({ doc, paras: ps });
  }
  return { terms, resources };
}

/** The documents of the top 100 paragraphs, in order of first appearance. */
function ranked(m, variant) {
  const scored = [];
  for (const r of m.resources) {
    if (variant.every) {
      for (const p of r.paras) scored.push([p.i, variant.every(p, r, m.terms, stats)]);
      continue;
    }
    let best = r.paras[0];
    for (const p of r.paras) if (p.own > best.own || (p.own === best.own && p.i < best.i)) best = p;
    for (const p of r.paras) scored.push([p.i, p === best ? variant.resource(r, best, m.terms, stats) : p.own]);
  }
  scored.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  const out = [];
  for (const [i] of scored.slice(0, 100)) if (!out.includes(paras[i].doc)) out.push(paras[i].doc);
  return out;
}

function load(split) {
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
  return queries
    .map((q) => ({ id: q._id, judged: qrels.get(q._id), m: matches(q.text) }))
    .filter((q) => q.judged && [...q.judged.values()].some((g) => g > 0));
}

function perQuery(qs, variant) {
  return qs.map(({ judged, m }) => {
    const docs = ranked(m, variant);
    let dcg = 0;
    docs.slice(0, 10).forEach((d, i) => (dcg += (judged.get(d) ?? 0) / Math.log2(i + 2)));
    const gains = [...judged.values()].filter((g) => g > 0).sort((x, y) => y - x);
    let ideal = 0;
    gains.slice(0, 10).forEach((g, i) => (ideal += g / Math.log2(i + 2)));
    const relevant = [...judged].filter(([, g]) => g > 0);
    return [dcg / ideal, relevant.filter(([d]) => docs.includes(d)).length / relevant.length];
  });
}

const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const splits = a.splits ? a.splits.split(',') : [''];
const loaded = splits.map((s) => [s, load(s)]);
const names = a.variants.split(',');
if (names[0] !== 'bm25') names.unshift('bm25');
console.log(
  `${a.dataset} (${mode}${subset ? `, the ${docs.length} docs of ${a.subset}` : ''}): ${docs.length} docs, ${N} paragraphs; ` +
    `nDCG@10 / Recall@100, then the nDCG@10 gain over bm25 ± its standard error (query by query)`,
);
const dump = {};
const base = new Map();
for (const name of names) {
  const [kind, args] = name.split(':');
  const make = VARIANTS[kind];
  if (!make) throw new Error(`unknown variant ${kind} (${Object.keys(VARIANTS).join(', ')})`);
  const variant = make(...(args ? args.split('/').map(Number) : []));
  const cells = loaded.map(([s, qs]) => {
    const rows = perQuery(qs, variant);
    if (!base.has(s)) base.set(s, rows);
    const diff = rows.map(([n], i) => n - base.get(s)[i][0]);
    const se = Math.sqrt(mean(diff.map((x) => (x - mean(diff)) ** 2)) / diff.length);
    dump[`${name} ${s || 'all'}`] = Object.fromEntries(qs.map((q, i) => [q.id, rows[i][0]]));
    const gain = `${mean(diff) >= 0 ? '+' : ''}${mean(diff).toFixed(4)} ± ${se.toFixed(4)}`;
    return `${s || 'all'} ${mean(rows.map((r) => r[0])).toFixed(4)} / ${mean(rows.map((r) => r[1])).toFixed(3)} ${gain}`;
  });
  console.log(`${name.padEnd(22)} ${cells.join(' | ')}`);
}
if (a['per-query']) writeFileSync(a['per-query'], JSON.stringify(dump));
