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
//     [--idf resources: idf over the resources instead of the paragraphs, in every variant]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { analysis, cell, dataDir, judge, judgedQueries, paragraphs, subsetOf } from './keyword-corpus.mjs';
import { VARIANTS } from './keyword-variants.mjs';

const { values: a } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    splits: { type: 'string', default: '' },
    'doc-mode': { type: 'string', default: 'separate' },
    variants: { type: 'string', default: 'bm25,every:0.5,best:0.5' },
    language: { type: 'string', default: 'en' },
    subset: { type: 'string' },
    'per-query': { type: 'string' },
    idf: { type: 'string', default: 'paragraphs' },
  },
});
const dir = dataDir(a.dataset);
const mode = a['doc-mode'];
const lang = a.language;
const subset = subsetOf(a.subset);
/** Paragraphs in creation order: { doc, kind (title | body), tf, len }. */
const paras = paragraphs(dir, { mode, language: lang, subset });
const docCount = new Set(paras.map((p) => p.doc)).size;
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
  for (const t of [...new Set(analysis.analyzeQuery(query, [lang]))].sort()) {
    const list = postings.get(t);
    if (!list) continue;
    const q = terms.length;
    // --idf resources: a term's rarity among resources (a title and its body count once), not paragraphs.
    const [n, df] = a.idf === 'resources' ? [docCount, new Set(list.map(([i]) => paras[i].doc)).size] : [N, list.length];
    terms.push({ idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)), df: list.length });
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
  return judgedQueries(dir, split, subset).map((q) => ({ ...q, m: matches(q.text) }));
}

function perQuery(qs, variant) {
  return qs.map(({ judged, m }) => judge(judged, ranked(m, variant)));
}

const splits = a.splits ? a.splits.split(',') : [''];
const loaded = splits.map((s) => [s, load(s)]);
const names = a.variants.split(',');
if (names[0] !== 'bm25') names.unshift('bm25');
console.log(
  `${a.dataset} (${mode}${subset ? `, the ${docCount} docs of ${a.subset}` : ''}): ${docCount} docs, ${N} paragraphs; ` +
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
    dump[`${name} ${s || 'all'}`] = Object.fromEntries(qs.map((q, i) => [q.id, rows[i][0]]));
    return cell(s, rows, base.get(s));
  });
  console.log(`${name.padEnd(22)} ${cells.join(' | ')}`);
}
if (a['per-query']) writeFileSync(a['per-query'], JSON.stringify(dump));
