// Scoring variants for tools/bench/keyword-offline.mjs: each scores a resource from its paragraphs
// that hold a query term. `r.paras`: { i, kind (title | body), len, f: [[term, tf]], own (its BM25) };
// `terms`: [{ idf, df }]; `stats`: { N, avgdl, avgDoc, avgKind, docLength, k1, b }. Parameters are
// written after a colon, separated by slashes: `best:0.5`, `bm25f:2/0.5`.

/** Σ over terms of idf·(k1 + 1)·T / (k1 + T): a saturated sum of length-normalised term frequencies. */
function saturate(T, terms, stats) {
  let s = 0;
  for (const [q, t] of T) s += (terms[q].idf * (stats.k1 + 1) * t) / (stats.k1 + t);
  return s;
}

/** The first attempt's R: BM25F with every paragraph a field, normalised by the KB's paragraph length. */
function resourceBm25f(r, terms, stats, weight = () => 1, avg = () => stats.avgdl) {
  const T = new Map();
  for (const p of r.paras) {
    const norm = 1 - stats.b + (stats.b * p.len) / Math.max(avg(p), 1);
    for (const [q, f] of p.f) T.set(q, (T.get(q) ?? 0) + (weight(p) * f) / norm);
  }
  return saturate(T, terms, stats);
}

/** The resource as one document (title-in-body): its tf summed, its whole length against the mean resource length. */
function concatenated(r, terms, stats) {
  const f = new Map();
  for (const p of r.paras) for (const [q, x] of p.f) f.set(q, (f.get(q) ?? 0) + x);
  const norm = 1 - stats.b + (stats.b * stats.docLength.get(r.doc)) / Math.max(stats.avgDoc, 1);
  return saturate(new Map([...f].map(([q, x]) => [q, x / norm])), terms, stats);
}

/** One term's BM25 in one paragraph. */
function contribution(p, f, idf, stats) {
  const norm = 1 - stats.b + (stats.b * p.len) / Math.max(stats.avgdl, 1);
  return (idf * (stats.k1 + 1) * f) / (f + stats.k1 * norm);
}

export const VARIANTS = {
  /** Today: the best paragraph's own BM25. */
  bm25: () => ({ resource: (r, best) => best.own }),
  /** The reverted first attempt: every paragraph (1 − λ)·own + λ·R. */
  every: (lambda) => ({ every: (p, r, terms, stats) => (1 - lambda) * p.own + lambda * resourceBm25f(r, terms, stats) }),
  /** The same mixture on the best paragraph only. */
  best: (lambda) => ({ resource: (r, best, terms, stats) => (1 - lambda) * best.own + lambda * resourceBm25f(r, terms, stats) }),
  /** BM25F with a length average per kind of field (titles, bodies) and a title weight. */
  bm25f: (titleWeight, lambda) => ({
    resource: (r, best, terms, stats) =>
      (1 - lambda) * best.own +
      lambda *
        resourceBm25f(
          r,
          terms,
          stats,
          (p) => (p.kind === 'title' ? titleWeight : 1),
          (p) => stats.avgKind[p.kind],
        ),
  }),
  /** The resource as one document. */
  concat: (lambda) => ({ resource: (r, best, terms, stats) => (1 - lambda) * best.own + lambda * concatenated(r, terms, stats) }),
  /** CombSUM, damped: the best paragraph plus λ times the others. */
  sum: (lambda) => ({ resource: (r, best) => best.own + lambda * r.paras.reduce((s, p) => s + (p === best ? 0 : p.own), 0) }),
  /** The best paragraph plus λ times, for each query term it lacks, that term's best score in another paragraph. */
  missing: (lambda) => ({
    resource: (r, best, terms, stats) => {
      const has = new Set(best.f.map(([q]) => q));
      const extra = new Map();
      for (const p of r.paras) {
        if (p === best) continue;
        for (const [q, f] of p.f) if (!has.has(q)) extra.set(q, Math.max(extra.get(q) ?? 0, contribution(p, f, terms[q].idf, stats)));
      }
      return best.own + lambda * [...extra.values()].reduce((s, x) => s + x, 0);
    },
  }),
  /** The best paragraph scaled by the share of the query's idf the resource covers, to the power α. */
  coverage: (alpha) => ({
    resource: (r, best, terms) => {
      const seen = new Set(r.paras.flatMap((p) => p.f.map(([q]) => q)));
      const total = terms.reduce((s, t) => s + t.idf, 0);
      const covered = [...seen].reduce((s, q) => s + terms[q].idf, 0);
      return best.own * (covered / total) ** alpha;
    },
  }),
};
