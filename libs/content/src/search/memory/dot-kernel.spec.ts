import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { LANES, VectorBlock, norm2, queryFloat32, simdKernel, toFloat32 } from './dot-kernel';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

describe('dot kernel', () => {
  it('assembles a valid WebAssembly SIMD module on this Node', () => {
    expect(simdKernel()).not.toBeNull();
  });

  it('reads decimals like strtof, also at exact float32 midpoints', () => {
    // 1 + 2^-24 is halfway between 1 and 1 + 2^-23, and String() gives 1.0000000596046448, just above it.
    expect(toFloat32(1 + 2 ** -24)).toBe(1 + 2 ** -23);
    // 1 + 3·2^-24 is halfway between 1 + 2^-23 and 1 + 2^-22; String() gives 1.0000001788139343, just below.
    expect(toFloat32(1 + 3 * 2 ** -24)).toBe(1 + 2 ** -23);
    // 2^-1 + 2^-25 is a midpoint too; String() gives 0.5000000298023224, just above it.
    expect(toFloat32(0.5 + 2 ** -25)).toBe(0.5 + 2 ** -24);
    expect(toFloat32(0.5)).toBe(0.5);
    expect(toFloat32(-0.1)).toBe(Math.fround(-0.1));
  });

  it('gives the bits pgvector gives (inner product and cosine), WebAssembly and JavaScript alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-dot-kernel-'));
    const db = await createServiceDataSource({
      service: 'test',
      schema: 'dotk',
      dataDir: dir,
      entities: [],
      migrations: [],
      runMigrations: false,
    });
    try {
      await db.query('CREATE EXTENSION IF NOT EXISTS vector');
      await db.query('CREATE TABLE dotk.t (id int, v vector)');
      const rnd = prng(7);
      const dim = 37;
      const n = 2 * LANES + 5;
      const vs = Array.from({ length: n }, () => Array.from({ length: dim }, () => rnd() * 0.1));
      const q = Array.from({ length: dim }, () => rnd() * 0.1);
      // exact float32 midpoints, where reading the decimal differs from Math.fround
      q[0] = 1 + 2 ** -24;
      q[1] = -(1 + 3 * 2 ** -24);
      q[2] = 0.5 + 2 ** -25;
      const parsed = (await db.query(`SELECT $1::vector::text AS v`, [`[${q.join(',')}]`])) as { v: string }[];
      expect([...queryFloat32(q)]).toEqual((JSON.parse(parsed[0]!.v) as number[]).map(Math.fround));
      for (let i = 0; i < n; i++) await db.query('INSERT INTO dotk.t VALUES ($1, $2::vector)', [i, `[${vs[i]!.join(',')}]`]);
      const res = {
        rows: (await db.query(
          `SELECT (-(v <#> $1::vector))::text AS dot, (1 - (v <=> $1::vector))::text AS cos, v::text AS vt FROM dotk.t ORDER BY id`,
          [`[${q.join(',')}]`],
        )) as { dot: string; cos: string; vt: string }[],
      };
      const block = new VectorBlock(dim, n);
      const js = new VectorBlock(dim, n, { javascript: true });
      const stored = res.rows.map((r) => Float32Array.from(JSON.parse(r.vt) as number[]));
      stored.forEach((v, i) => (block.set(i, v), js.set(i, v)));
      const qf = queryFloat32(q);
      const dots = block.dots(qf);
      expect([...js.dots(qf)]).toEqual([...dots]);
      // a filtered scan (groups 0 and 2 of 3) gives those groups' products, both ways
      const some = Uint8Array.from([1, 0, 1]);
      const kept = (d: Float32Array) => [...d].filter((_x, i) => some[Math.floor(i / LANES)] === 1);
      expect(kept(block.dotsWhere(qf, some))).toEqual(kept(dots));
      expect(kept(js.dotsWhere(qf, some))).toEqual(kept(dots));
      // a group left out is not computed (a fresh block's output is zeros there)
      const fresh = new VectorBlock(dim, n);
      stored.forEach((v, i) => fresh.set(i, v));
      expect([...fresh.dotsWhere(qf, Uint8Array.from([0, 1, 1])).slice(0, LANES)]).toEqual(new Array(LANES).fill(0));
      const qn = norm2(qf);
      res.rows.forEach((r, i) => {
        expect(dots[i]).toBe(Number(r.dot));
        const sim = Math.min(1, Math.max(-1, (dots[i] as number) / Math.sqrt(norm2(stored[i]!) * qn)));
        expect(1 - (1 - sim)).toBe(Number(r.cos));
      });
    } finally {
      await closeServiceDataSource(db);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
