import { LANES, VectorBlock, norm2 } from './dot-kernel';
import { applyChanges, type KbChanges } from './apply-changes';
import { KbMemoryIndex } from './kb-memory-index';
import { VectorGroupBuilder, vectorFromSend } from './vector-group';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

/** pgvector's binary send format: int16 dimensions, int16 unused, big-endian float4s. */
function send(v: Float32Array): Uint8Array {
  const b = new Uint8Array(4 + 4 * v.length);
  const view = new DataView(b.buffer);
  view.setUint16(0, v.length);
  v.forEach((x, i) => view.setFloat32(4 + 4 * i, x));
  return b;
}

describe('vector groups built as vectors arrive', () => {
  const dim = 11;
  const rnd = prng(3);
  const vectors = Array.from({ length: 3 * LANES + 7 }, () => Float32Array.from({ length: dim }, () => rnd()));
  // ascending ordinals with gaps (paragraphs without a vector in this vectorset)
  const ords = vectors.map((_v, i) => 3 * i + (i % 2));
  const q = Float32Array.from({ length: dim }, () => rnd());

  function reference(javascript: boolean): Float32Array {
    const block = new VectorBlock(dim, vectors.length, { javascript });
    vectors.forEach((v, i) => block.set(i, v));
    return block.dots(q);
  }

  // capacity exact, too small (grown on the way), far too large (copied to its size at the end)
  it.each([
    ['exact', vectors.length],
    ['too small', 5],
    ['far too large', 10 * vectors.length],
  ])('holds the same vectors, ordinals and norms whatever its first capacity (%s)', (_name, capacity) => {
    for (const javascript of [false, true]) {
      const builder = new VectorGroupBuilder(dim, capacity, { javascript });
      vectors.forEach((v, i) => builder.add(ords[i] as number, v));
      const group = builder.done();
      expect([...group.ords]).toEqual(ords);
      expect([...group.norms]).toEqual(vectors.map((v) => norm2(v)));
      expect(group.block.count).toBe(vectors.length);
      expect(group.block.groups).toBe(Math.ceil(vectors.length / LANES));
      expect([...group.block.dots(q)]).toEqual([...reference(javascript)]);
      // a filtered scan of the last group only
      const last = new Uint8Array(group.block.groups);
      last[last.length - 1] = 1;
      const from = (group.block.groups - 1) * LANES;
      expect([...group.block.dotsWhere(q, last).slice(from)]).toEqual([...reference(javascript).slice(from)]);
      // memory within one group of LANES of what the vectors need, unless the capacity was exact
      expect(group.block.capacity).toBeLessThanOrEqual(Math.max(capacity, vectors.length));
      expect(group.block.capacity).toBeGreaterThanOrEqual(vectors.length);
      if (capacity > vectors.length) expect(group.block.capacity).toBe(vectors.length);
    }
  });

  it('reads pgvector send bytes without an array per vector, into the same values', () => {
    const builder = new VectorGroupBuilder(dim, vectors.length);
    vectors.forEach((v, i) => builder.addSend(ords[i] as number, send(v)));
    expect([...builder.done().block.dots(q)]).toEqual([...reference(false)]);
    const into = new Float32Array(dim);
    expect(vectorFromSend(send(vectors[0]!), into)).toBe(into);
    expect([...into]).toEqual([...vectors[0]!]);
    expect(() => vectorFromSend(send(vectors[0]!), new Float32Array(dim + 1))).toThrow(RangeError);
  });

  it('refuses ordinals out of order and vectors of another dimension', () => {
    const builder = new VectorGroupBuilder(dim, 4);
    builder.add(5, vectors[0]!);
    expect(() => builder.add(5, vectors[1]!)).toThrow(/ordinal 5 after 5/);
    expect(() => builder.add(4, vectors[1]!)).toThrow(RangeError);
    expect(() => builder.add(6, new Float32Array(dim - 1))).toThrow(/a vector of 10 in a group of 11/);
    expect(builder.count).toBe(1);
  });

  it('an empty group is an empty block', () => {
    const group = new VectorGroupBuilder(dim, 100).done();
    expect(group.ords.length).toBe(0);
    expect(group.block.count).toBe(0);
    expect(group.block.dots(q).length).toBe(0);
  });

  it('a block keeps at most its capacity and copies what it holds when resized', () => {
    const block = new VectorBlock(dim, LANES + 1);
    expect(() => block.truncate(LANES + 2)).toThrow(RangeError);
    expect(() => block.truncate(-1)).toThrow(RangeError);
    vectors.slice(0, LANES + 1).forEach((v, i) => block.set(i, v));
    const before = block.dots(q);
    const bigger = block.resized(4 * LANES);
    expect(bigger.count).toBe(LANES + 1);
    expect([...bigger.dots(q)]).toEqual([...before]);
    block.truncate(3);
    expect(() => bigger.resized(2)).toThrow(RangeError);
    expect([...block.dots(q)]).toEqual([...before.slice(0, 3)]);
  });
});

describe('changes applied to an index', () => {
  /** A paragraph as the database holds it. */
  interface Para {
    id: string;
    terms: Record<string, number>;
    vector: Float32Array;
    hidden?: boolean;
    groups?: string[];
    rid?: string;
  }
  const dim = 5;
  const rnd = prng(9);
  const vec = () => Float32Array.from({ length: dim }, () => rnd());

  /** The index a full read of `paras` builds (ids ascending), as SearchMemoryService.load does. */
  function fullRead(paras: Para[], generation: string): KbMemoryIndex {
    const sorted = [...paras].sort((a, b) => Number(a.id) - Number(b.id));
    const postings = new Map<string, { ords: number[]; tf: number[] }>();
    sorted.forEach((p, ord) => {
      for (const [t, tf] of Object.entries(p.terms)) {
        const e = postings.get(t) ?? { ords: [], tf: [] };
        e.ords.push(ord);
        e.tf.push(tf);
        postings.set(t, e);
      }
    });
    const groupKeys = [...new Set(sorted.map((p) => JSON.stringify(p.groups ?? [])))];
    const rids = [...new Set(sorted.map((p) => p.rid ?? 'r'))];
    const builder = new VectorGroupBuilder(dim, sorted.length);
    sorted.forEach((p, ord) => builder.add(ord, p.vector));
    const lengths = sorted.map((p) => Object.values(p.terms).reduce((a, b) => a + b, 0));
    return new KbMemoryIndex({
      kbid: 'kb',
      generation,
      paragraphs: sorted.length,
      totalLength: lengths.reduce((a, b) => a + b, 0),
      ids: sorted.map((p) => p.id),
      hidden: Uint8Array.from(sorted.map((p) => (p.hidden ? 1 : 0))),
      groupSet: Int32Array.from(sorted.map((p) => groupKeys.indexOf(JSON.stringify(p.groups ?? [])))),
      groupSets: groupKeys.map((k) => JSON.parse(k) as string[]),
      df: new Map([...postings].map(([t, e]) => [t, e.ords.length])),
      lengths: Int32Array.from(lengths),
      postings: new Map([...postings].map(([t, e]) => [t, { ords: Int32Array.from(e.ords), tf: Int32Array.from(e.tf) }])),
      vectors: new Map([['vs', new Map([[dim, [builder.done()]]])]]),
      attributes: { tagSets: [[]], fields: ['f'], languages: ['en'], rids },
      columns: {
        tagSet: new Int32Array(sorted.length),
        field: new Int32Array(sorted.length),
        language: new Int32Array(sorted.length),
        rid: Int32Array.from(sorted.map((p) => rids.indexOf(p.rid ?? 'r'))),
        created: new Float64Array(sorted.length),
      },
      runs: Int32Array.from(sorted.keys()),
    });
  }

  /** The changes that take a KB from `before` to `after` (what SearchMemoryService.update reads). */
  function changes(before: Para[], after: Para[], generation: string): KbChanges {
    const was = new Map(before.map((p) => [p.id, p]));
    const now = new Map(after.map((p) => [p.id, p]));
    const touched = [...new Set([...was.keys(), ...now.keys()])].filter((id) => was.get(id) !== now.get(id));
    const rows = touched
      .filter((id) => now.has(id))
      .sort((a, b) => Number(a) - Number(b))
      .map((id) => now.get(id)!);
    const terms = new Set(touched.flatMap((id) => [...Object.keys(was.get(id)?.terms ?? {}), ...Object.keys(now.get(id)?.terms ?? {})]));
    return {
      generation,
      paragraphs: after.length,
      totalLength: after.reduce((n, p) => n + Object.values(p.terms).reduce((a, b) => a + b, 0), 0),
      touched,
      rows: rows.map((p) => ({
        id: p.id,
        hidden: !!p.hidden,
        groups: JSON.stringify(p.groups ?? []),
        tags: '[]',
        field: 'f',
        language: 'en',
        rid: p.rid ?? 'r',
        created: 0,
      })),
      postings: new Map(
        rows.map((p) => [
          p.id,
          { length: Object.values(p.terms).reduce((a, b) => a + b, 0), terms: Object.keys(p.terms), tf: Object.values(p.terms) },
        ]),
      ),
      vectors: rows.map((p) => ({ id: p.id, vectorset: 'vs', v: send(p.vector) })),
      df: new Map([...terms].map((t) => [t, after.filter((p) => t in p.terms).length])),
    };
  }

  it('answers exactly what a full read of the same data answers, after inserts, updates, deletes and updates of appended paragraphs', () => {
    const t = () => ({ x: 1 + Math.floor(rnd() * 3), ...(rnd() < 0.5 ? { y: 1 } : {}), ...(rnd() < 0.3 ? { z: 2 } : {}) });
    let kb: Para[] = Array.from({ length: 40 }, (_v, i) => ({
      id: String(10 + i * 2),
      terms: t(),
      vector: vec(),
      groups: i % 3 ? [] : ['a'],
      rid: `r${i % 4}`,
    }));
    let idx = fullRead(kb, 'g0');
    const steps: ((k: Para[]) => Para[])[] = [
      (k) => [...k, ...Array.from({ length: 5 }, (_v, i) => ({ id: String(200 + i), terms: t(), vector: vec(), rid: 'r1' }))], // inserts
      (k) => k.filter((p) => Number(p.id) % 6 !== 0), // deletes
      (k) => k.map((p) => (Number(p.id) % 5 === 0 ? { ...p, hidden: true } : p)), // updates in place (same id)
      (k) => k.map((p) => (p.id === '201' ? { ...p, groups: ['a'], terms: { x: 5 } } : p)), // an appended paragraph updated
      (k) => [...k.filter((p) => p.id !== '202'), { id: '15', terms: { x: 1, y: 1 }, vector: vec() }], // an appended one deleted; an id between old ones
      // enough vectors for a group of its own (WebAssembly), then a small one after it
      (k) => [...k, ...Array.from({ length: 1_100 }, (_v, i) => ({ id: String(1_000 + i), terms: t(), vector: vec(), rid: `r${i % 4}` }))],
      (k) => [...k.map((p) => (p.id === '1003' ? { ...p, hidden: true } : p)), { id: '5000', terms: { y: 3 }, vector: vec() }],
    ];
    steps.forEach((step, i) => {
      const next = step(kb);
      idx = applyChanges(idx, changes(kb, next, `g${i + 1}`));
      kb = next;
      const full = fullRead(kb, `g${i + 1}`);
      // the same query vector for both
      const state = Math.floor((rnd() + 0.5) * 1e9);
      expect(idx.generation).toBe(`g${i + 1}`);
      expect(answersWith(idx, state)).toEqual(answersWith(full, state));
      for (const p of kb) expect(idx.id(idx.ordOf(p.id)!)).toBe(p.id);
    });
    expect(idx.fragmentation.dead).toBeGreaterThan(0);
    // the full read's group; the small group every update made again, until it held over 1,024
    // vectors; a small one after it
    expect(idx.fragmentation.groups).toBe(3);
  });

  it('leaves an index as it was when changes are applied to it, even twice in different ways', () => {
    const t = () => ({ x: 1 + Math.floor(rnd() * 3), ...(rnd() < 0.5 ? { y: 1 } : {}) });
    const kb: Para[] = Array.from({ length: 30 }, (_v, i) => ({ id: String(1 + i), terms: t(), vector: vec() }));
    const base = fullRead(kb, 'g0');
    const seed = 12345;
    const before = answersWith(base, seed);
    // two different sets of changes on the same index (a discarded update, a full read's catch-up)
    const a: Para[] = [...kb.slice(3), ...Array.from({ length: 4 }, (_v, i) => ({ id: String(100 + i), terms: t(), vector: vec() }))];
    const b: Para[] = [
      ...kb.slice(0, 25),
      ...Array.from({ length: 6 }, (_v, i) => ({ id: String(200 + i), terms: { y: 2, z: 1 }, vector: vec() })),
    ];
    const ia = applyChanges(base, changes(kb, a, 'ga'));
    const ib = applyChanges(base, changes(kb, b, 'gb'));
    const a2 = [...a, { id: '300', terms: { x: 2 }, vector: vec() }];
    const ia2 = applyChanges(ia, changes(a, a2, 'ga2'));
    expect(answersWith(base, seed)).toEqual(before);
    expect(answersWith(ia, seed)).toEqual(answersWith(fullRead(a, 'ga'), seed));
    expect(answersWith(ib, seed)).toEqual(answersWith(fullRead(b, 'gb'), seed));
    expect(answersWith(ia2, seed)).toEqual(answersWith(fullRead(a2, 'ga2'), seed));
    expect(answersWith(ia, seed)).toEqual(answersWith(fullRead(a, 'ga'), seed));
  });

  /** Everything a query can see — BM25 and both similarities, with and without filters, ids and scores — the query vector drawn from `seed`. */
  function answersWith(idx: KbMemoryIndex, seed: number): unknown {
    const r = prng(seed);
    const q = Array.from({ length: dim }, () => r());
    const named = (hits: { ord: number; score: number }[]) => hits.map((h) => [idx.id(h.ord), h.score]);
    const filters = [
      { showHidden: true },
      { showHidden: false },
      { showHidden: false, groups: ['a'] },
      { showHidden: true, match: { op: 'rid' as const, ids: ['r1'] } },
    ];
    return {
      bm25: named(idx.bm25(['x', 'y', 'z'], 50, () => true).hits),
      zIds: idx.bm25(['z'], 2_000, () => true).hits.map((h) => idx.id(h.ord)),
      top3: named(idx.bm25(['x'], 3, () => true).hits),
      filtered: filters.map((f) => [
        idx.mask(f).count,
        named(idx.bm25(['x', 'y'], 50, () => true, idx.mask(f).pass).hits),
        named(idx.similarity('vs', q, 'COSINE', 50, () => true, idx.mask(f)).hits),
      ]),
      dot: named(idx.similarity('vs', q, 'DOT', 50, () => true).hits),
      dot3: named(idx.similarity('vs', q, 'DOT', 3, () => true).hits),
      population: idx.population('vs'),
    };
  }
});
