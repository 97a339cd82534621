// Evidence the paragraph BM25 of /find does not use, tried offline on a BEIR set (issue 21 item 2):
// each variant changes what a query matches or how a term weighs, then ranks as keywordSearch does
// (the top 100 paragraphs, documents in order of first appearance) and is compared with today's
// BM25 query by query (mean nDCG@10 gain ± its standard error). Variants, parameters after a colon,
// separated by slashes:
//   bm25                 today (k1 1.2, b 0.75, idf over the KB's paragraphs)
//   okapi:k1/b           other k1 and b
//   docidf               idf over resources instead of paragraphs (a title and its body count once)
//   rm3:docs/terms/w     pseudo-relevance feedback, RM3: the `terms` heaviest terms of the first
//                        `docs` resources (tf/length weighted by the resource's score) added to the
//                        query, the original query keeping weight `w`
//   bo1:docs/terms/beta  pseudo-relevance feedback, DFR Bo1 term weights, added with weight `beta`
//   pairs:λ/window       term proximity: query words next to each other (after stop words) also
//                        looked up as pairs within `window` terms of each other in the paragraph
//                        (1: adjacent and in order), each pair weighted λ
//
//   node tools/bench/keyword-evidence.mjs --dataset scifact --splits dev,train --doc-mode separate \
//     --variants bm25,okapi:0.9/0.75,docidf,rm3:10/10/0.5,bo1:3/10/0.5,pairs:0.2/1,pairs:0.2/4
import { parseArgs } from 'node:util';
import { analysis, cell, dataDir, judge, judgedQueries, paragraphs } from './keyword-corpus.mjs';

const { values: a } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    splits: { type: 'string', default: '' },
    'doc-mode': { type: 'string', default: 'separate' },
    variants: { type: 'string', default: 'bm25,docidf,rm3:10/10/0.5' },
    language: { type: 'string', default: 'en' },
  },
});
const dir = dataDir(a.dataset);
const lang = a.language;
const paras = paragraphs(dir, { mode: a['doc-mode'], language: lang });
const N = paras.length;
const avgdl = paras.reduce((n, p) => n + p.len, 0) / N;

/** term → [[paragraph, tf]]; pair postings are built on first use, per window. */
function invert(tfOf) {
  const postings = new Map();
  paras.forEach((p, i) => {
    for (const [t, f] of tfOf(p)) {
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t).push([i, f]);
    }
  });
  return postings;
}
const postings = invert((p) => p.tf);
const paragraphsOf = new Map();
paras.forEach((p, i) => paragraphsOf.set(p.doc, [...(paragraphsOf.get(p.doc) ?? []), i]));
const resourceDf = new Map([...postings].map(([t, list]) => [t, new Set(list.map(([i]) => paras[i].doc)).size]));

const pairKey = (x, y, window) => (window === 1 ? `${x}\u0001${y}` : [x, y].sort().join('\u0002'));
const pairPostings = new Map();
function pairsIndex(window) {
  if (!pairPostings.has(window)) {
    pairPostings.set(
      window,
      invert((p) => {
        const tf = new Map();
        for (let i = 0; i < p.terms.length; i++) {
          for (let j = i + 1; j <= i + window && j < p.terms.length; j++) {
            const key = pairKey(p.terms[i], p.terms[j], window);
            tf.set(key, (tf.get(key) ?? 0) + 1);
          }
        }
        return tf;
      }),
    );
  }
  return pairPostings.get(window);
}

const idfOf = (n, df) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
const paragraphIdf = (list) => idfOf(N, list.length);

/**
 * The documents of the top 100 paragraphs for a weighted query: [[term, weight, postings]], with
 * their best paragraph's score. `idf(term, list)` is the term's idf.
 */
function search(query, { k1 = 1.2, b = 0.75, idf = (t, list) => paragraphIdf(list) } = {}) {
  const c1 = k1 * (1 - b);
  const c2 = (k1 * b) / avgdl;
  const score = new Map();
  for (const [t, weight, index] of query) {
    const list = index.get(t);
    if (!list) continue;
    const w = weight * idf(t, list) * (k1 + 1);
    for (const [i, f] of list) score.set(i, (score.get(i) ?? 0) + (w * f) / (f + c1 + c2 * paras[i].len));
  }
  const top = [...score].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, 100);
  const seen = new Map();
  for (const [i, s] of top) if (!seen.has(paras[i].doc)) seen.set(paras[i].doc, s);
  return [...seen];
}

const termsOf = (text) => [...new Set(analysis.analyzeQuery(text, [lang]))].sort().map((t) => [t, 1, postings]);

/** Adds the feedback terms, weighted, to a query whose own terms keep `keep` of the total weight. */
function expanded(query, feedback, keep) {
  const total = feedback.reduce((s, [, w]) => s + w, 0) || 1;
  const weights = new Map(query.map(([t]) => [t, keep / query.length]));
  for (const [t, w] of feedback) weights.set(t, (weights.get(t) ?? 0) + ((1 - keep) * w) / total);
  return [...weights].map(([t, w]) => [t, w, postings]);
}

/** A resource's terms and their counts, over all its paragraphs. */
function resourceTf(doc) {
  const tf = new Map();
  for (const i of paragraphsOf.get(doc)) for (const [t, f] of paras[i].tf) tf.set(t, (tf.get(t) ?? 0) + f);
  return tf;
}

const VARIANTS = {
  bm25: () => (text) => search(termsOf(text)),
  okapi: (k1, b) => (text) => search(termsOf(text), { k1, b }),
  docidf: () => (text) => search(termsOf(text), { idf: (t) => idfOf(paragraphsOf.size, resourceDf.get(t)) }),
  rm3: (docs, terms, keep) => (text) => {
    const query = termsOf(text);
    const relevance = new Map();
    for (const [doc, score] of search(query).slice(0, docs)) {
      const tf = resourceTf(doc);
      const length = [...tf.values()].reduce((s, f) => s + f, 0);
      for (const [t, f] of tf) relevance.set(t, (relevance.get(t) ?? 0) + (score * f) / length);
    }
    return search(expanded(query, [...relevance].sort((x, y) => y[1] - x[1]).slice(0, terms), keep));
  },
  bo1: (docs, terms, beta) => (text) => {
    const query = termsOf(text);
    const inTop = new Map();
    for (const [doc] of search(query).slice(0, docs)) for (const [t, f] of resourceTf(doc)) inTop.set(t, (inTop.get(t) ?? 0) + f);
    const weights = [...inTop].map(([t, f]) => {
      const mean = postings.get(t).reduce((s, [, x]) => s + x, 0) / N;
      return [t, f * Math.log2((1 + mean) / mean) + Math.log2(1 + mean)];
    });
    const top = weights.sort((x, y) => y[1] - x[1]).slice(0, terms);
    const max = top[0]?.[1] ?? 1;
    const added = new Map(query.map(([t]) => [t, 1]));
    for (const [t, w] of top) added.set(t, (added.get(t) ?? 0) + (beta * w) / max);
    return search([...added].map(([t, w]) => [t, w, postings]));
  },
  pairs: (lambda, window) => (text) => {
    const words = analysis.analyze(text, lang);
    const index = pairsIndex(window);
    const pairs = new Map();
    for (let i = 0; i + 1 < words.length; i++) {
      const key = pairKey(words[i], words[i + 1], window);
      pairs.set(key, (pairs.get(key) ?? 0) + lambda);
    }
    return search([...termsOf(text), ...[...pairs].map(([t, w]) => [t, w, index])]);
  },
};

const splits = a.splits ? a.splits.split(',') : [''];
const loaded = splits.map((s) => [s, judgedQueries(dir, s, null)]);
const names = a.variants.split(',');
if (names[0] !== 'bm25') names.unshift('bm25');
console.log(
  `${a.dataset} (${a['doc-mode']}): ${N} paragraphs; nDCG@10 / Recall@100, then the nDCG@10 gain over bm25 ± its standard error (query by query)`,
);
const base = new Map();
for (const name of names) {
  const [kind, args] = name.split(':');
  const make = VARIANTS[kind];
  if (!make) throw new Error(`unknown variant ${kind} (${Object.keys(VARIANTS).join(', ')})`);
  const run = make(...(args ? args.split('/').map(Number) : []));
  const cells = loaded.map(([s, qs]) => {
    const rows = qs.map((q) =>
      judge(
        q.judged,
        run(q.text).map(([doc]) => doc),
      ),
    );
    if (!base.has(s)) base.set(s, rows);
    return cell(s, rows, base.get(s));
  });
  console.log(`${name.padEnd(22)} ${cells.join(' | ')}`);
}
