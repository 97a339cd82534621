/**
 * Inner products of one query vector with many stored vectors, bit for bit as pgvector computes
 * them: every product and every partial sum rounded to float32, summed in dimension order
 * (pgvector's `VectorInnerProduct`; checked against PGlite's pgvector in dot-kernel.spec.ts).
 *
 * The stored vectors are laid out in groups of 16, component-interleaved (`group · dim · 16 +
 * i · 16 + lane`), so a WebAssembly SIMD loop computes 16 vectors at once, each lane summing its
 * own vector in order: exactly the sequential float32 sum, ~10× faster than Math.fround in
 * JavaScript. Without WebAssembly SIMD, a JavaScript loop with Math.fround gives the same bits.
 */

export const LANES = 16;

// The project compiles without the DOM library, and @types/node here declares no WebAssembly: the
// little used of it, typed locally (the global exists in every supported Node).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
type WasmModule = object;
declare const WebAssembly: {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
};

/** The kernel's module, assembled by hand (no toolchain): `dots(data, q, out, groups, dim)`. */
function kernelBytes(): Uint8Array {
  const leb = (n: number): number[] => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n !== 0) b |= 0x80;
      out.push(b);
    } while (n !== 0);
    return out;
  };
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const str = (s: string) => [...leb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
  const SIMD = 0xfd;
  const get = (i: number) => [0x20, i];
  const set = (i: number) => [0x21, i];
  // i32.const takes a signed LEB128: a small positive n whose bit 6 is set needs a second byte.
  const sleb = (n: number): number[] => {
    const out: number[] = [];
    for (;;) {
      const b = n & 0x7f;
      n >>= 7;
      if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
      out.push(b | 0x80);
    }
  };
  const i32c = (n: number) => [0x41, ...sleb(n)];
  const add1 = (local: number, n: number) => [...get(local), ...i32c(n), 0x6a, ...set(local)];
  const v128load = (offset: number) => [SIMD, 0x00, 0x02, ...leb(offset)];
  const v128store = (offset: number) => [SIMD, 0x0b, 0x02, ...leb(offset)];
  const f32x4mul = [SIMD, 0xe6, 0x01];
  const f32x4add = [SIMD, 0xe4, 0x01];
  // params: 0 data, 1 q, 2 out, 3 groups, 4 dim; locals: 5 g, 6 i, 7 qp (i32); 8 s, 9..12 acc0..3 (v128)
  const [DATA, Q, OUT, GROUPS, DIM, G, I, QP, S] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const ACC = [9, 10, 11, 12];
  const zero = [SIMD, 0x0c, ...new Array<number>(16).fill(0)];
  const body = [
    0x02,
    0x03,
    0x7f,
    0x05,
    0x7b, // locals: 3 × i32, 5 × v128
    0x02,
    0x40,
    0x03,
    0x40, // block, loop (groups)
    ...get(G),
    ...get(GROUPS),
    0x4f,
    0x0d,
    0x01, // g >= groups → exit
    ...ACC.flatMap((a) => [...zero, ...set(a)]),
    ...i32c(0),
    ...set(I),
    ...get(Q),
    ...set(QP),
    0x02,
    0x40,
    0x03,
    0x40, // block, loop (dimensions)
    ...get(I),
    ...get(DIM),
    0x4f,
    0x0d,
    0x01,
    ...get(QP),
    0x2a,
    0x02,
    0x00,
    SIMD,
    0x13,
    ...set(S), // s = splat(q[i])
    ...ACC.flatMap((a, k) => [...get(a), ...get(DATA), ...v128load(16 * k), ...get(S), ...f32x4mul, ...f32x4add, ...set(a)]),
    ...add1(DATA, 64),
    ...add1(QP, 4),
    ...add1(I, 1),
    0x0c,
    0x00,
    0x0b,
    0x0b, // br loop; end loop; end block
    ...ACC.flatMap((a, k) => [...get(OUT), ...get(a), ...v128store(16 * k)]),
    ...add1(OUT, 64),
    ...add1(G, 1),
    0x0c,
    0x00,
    0x0b,
    0x0b, // br loop; end loop; end block
    0x0b, // end function
  ];
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [0x01, 0x60, 0x05, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x00]),
    ...section(2, [0x01, ...str('env'), ...str('memory'), 0x02, 0x00, 0x01]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...str('dots'), 0x00, 0x00]),
    ...section(10, [0x01, ...leb(body.length), ...body]),
  ]);
}

let compiled: WasmModule | null | undefined;

/** The compiled kernel, or null where WebAssembly SIMD is not available. */
export function simdKernel(): WasmModule | null {
  if (compiled !== undefined) return compiled;
  try {
    const bytes = kernelBytes();
    compiled = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    compiled = null;
  }
  return compiled;
}

/** float32 as PostgreSQL's `strtof` reads the decimal `String(x)`: correctly rounded, also at exact float32 midpoints. */
export function toFloat32(x: number): number {
  const r = Math.fround(x);
  if (r === x || !Number.isFinite(x) || !Number.isFinite(r)) return r;
  // Only an x exactly halfway between two float32s can round differently from its decimal form.
  const other = neighbour(r, x > r ? 1 : -1);
  if ((r + other) / 2 !== x) return r;
  const cmp = compareDecimal(String(x), x);
  if (cmp === 0) return (floatBits(r) & 1) === 0 ? r : other; // an exact tie: to even
  return cmp > 0 ? Math.max(r, other) : Math.min(r, other);
}

const scratchF = new Float32Array(1);
const scratchU = new Uint32Array(scratchF.buffer);

function floatBits(f: number): number {
  scratchF[0] = f;
  return scratchU[0] as number;
}

function neighbour(f: number, direction: 1 | -1): number {
  if (f === 0) return direction * 1.401298464324817e-45;
  scratchF[0] = f;
  scratchU[0] = (scratchU[0] as number) + (f > 0 === direction > 0 ? 1 : -1);
  return scratchF[0] as number;
}

/** Sign of (decimal string − x), exactly (BigInt rationals). */
function compareDecimal(s: string, x: number): number {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(s);
  if (!m) return 0;
  const digits = BigInt(`${m[2]}${m[3] ?? ''}`);
  const exp10 = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  // x = mant · 2^exp2 exactly
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const e = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  const exp2 = e === 0 ? -1074 : e - 1075;
  if (e !== 0) mant |= 1n << 52n;
  // compare digits·10^exp10 with mant·2^exp2 (both non-negative)
  let left = digits;
  let right = mant;
  if (exp10 >= 0) left *= 10n ** BigInt(exp10);
  else right *= 10n ** BigInt(-exp10);
  if (exp2 >= 0) right <<= BigInt(exp2);
  else left <<= BigInt(-exp2);
  const sign = left > right ? 1 : left < right ? -1 : 0;
  return m[1] === '-' ? -sign : sign;
}

/** The query as float32, the way the SQL path's `'[x,…]'::vector` literal is read. */
export function queryFloat32(vector: number[]): Float32Array {
  return Float32Array.from(vector, (x) => toFloat32(Number.isFinite(x) ? x : 0));
}

/** Sequential float32 sum of squares (pgvector's norms for cosine). */
export function norm2(v: ArrayLike<number>, from = 0, dim = v.length): number {
  const f = Math.fround;
  let s = 0;
  for (let i = 0; i < dim; i++) {
    const x = v[from + i] as number;
    s = f(s + f(x * x));
  }
  return s;
}

/**
 * A set of vectors of one dimension in the interleaved layout, with `dots(q)` giving every
 * vector's inner product with q (float32 semantics). Memory: 4 bytes per component (plus padding
 * to 16 vectors).
 */
export class VectorBlock {
  /** Vectors the block has room for (its memory is laid out for them). */
  readonly capacity: number;
  private n: number;
  private readonly memory?: WasmMemory;
  private readonly run?: (data: number, q: number, out: number, groups: number, dim: number) => void;
  private readonly data: Float32Array;
  private readonly qOffset: number;
  private readonly outOffset: number;

  /** `javascript` forces the JavaScript loop (tests: both give the same bits). */
  constructor(
    readonly dim: number,
    capacity: number,
    o: { javascript?: boolean } = {},
  ) {
    this.capacity = capacity;
    this.n = capacity;
    const groups = Math.ceil(capacity / LANES);
    const dataFloats = groups * LANES * dim;
    const kernel = o.javascript ? null : simdKernel();
    if (kernel) {
      const bytes = (dataFloats + dim + groups * LANES) * 4;
      this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / 65_536)) });
      const instance = new WebAssembly.Instance(kernel, { env: { memory: this.memory } });
      this.run = instance.exports['dots'] as (data: number, q: number, out: number, groups: number, dim: number) => void;
      this.data = new Float32Array(this.memory.buffer, 0, dataFloats);
    } else {
      this.data = new Float32Array(dataFloats);
    }
    this.qOffset = dataFloats;
    this.outOffset = dataFloats + dim;
  }

  /** Vectors held: the capacity, unless `truncate` kept fewer. */
  get count(): number {
    return this.n;
  }

  /** Groups of LANES the held vectors occupy. */
  get groups(): number {
    return Math.ceil(this.n / LANES);
  }

  get bytes(): number {
    return this.memory ? this.memory.buffer.byteLength : this.data.byteLength;
  }

  /** Keeps the first `count` vectors (a block filled to less than its capacity). */
  truncate(count: number): void {
    if (!Number.isInteger(count) || count < 0 || count > this.capacity)
      throw new RangeError(`cannot hold ${count} of ${this.capacity} vectors`);
    this.n = count;
  }

  /** A block of `capacity` (at least the vectors held) with the same vectors, copied group by group. */
  resized(capacity: number): VectorBlock {
    const next = new VectorBlock(this.dim, capacity, { javascript: !this.memory });
    next.truncate(this.n);
    next.data.set(this.data.subarray(0, this.groups * LANES * this.dim));
    return next;
  }

  /** Vector `n`, into `into` (of `dim`). */
  get(n: number, into: Float32Array): Float32Array {
    const base = Math.floor(n / LANES) * LANES * this.dim;
    const lane = n % LANES;
    for (let i = 0; i < this.dim; i++) into[i] = this.data[base + i * LANES + lane] as number;
    return into;
  }

  /** Stores vector `n` (components already float32 values). */
  set(n: number, v: ArrayLike<number>): void {
    const base = Math.floor(n / LANES) * LANES * this.dim;
    const lane = n % LANES;
    for (let i = 0; i < this.dim; i++) this.data[base + i * LANES + lane] = v[i] as number;
  }

  /** Inner products of every vector with q (a Float32Array of `dim`), in vector order. */
  dots(q: Float32Array): Float32Array {
    if (this.memory && this.run) {
      new Float32Array(this.memory.buffer, this.qOffset * 4, this.dim).set(q);
      this.run(0, this.qOffset * 4, this.outOffset * 4, this.groups, this.dim);
      return new Float32Array(this.memory.buffer, this.outOffset * 4, this.count).slice();
    }
    const f = Math.fround;
    const out = new Float32Array(this.count);
    for (let n = 0; n < this.count; n++) {
      const base = Math.floor(n / LANES) * LANES * this.dim + (n % LANES);
      let s = 0;
      for (let i = 0; i < this.dim; i++) s = f(s + f((this.data[base + i * LANES] as number) * (q[i] as number)));
      out[n] = s;
    }
    return out;
  }

  /**
   * Inner products with q of the vectors in the groups of LANES whose `groups[g]` is non-zero (the
   * others' entries are left unspecified): a filtered scan reads only the groups it needs.
   */
  dotsWhere(q: Float32Array, groups: Uint8Array): Float32Array {
    if (this.memory && this.run) {
      new Float32Array(this.memory.buffer, this.qOffset * 4, this.dim).set(q);
      for (let g = 0; g < this.groups;) {
        if (groups[g] === 0) {
          g++;
          continue;
        }
        let end = g + 1;
        while (end < this.groups && groups[end] !== 0) end++;
        this.run(g * LANES * this.dim * 4, this.qOffset * 4, (this.outOffset + g * LANES) * 4, end - g, this.dim);
        g = end;
      }
      return new Float32Array(this.memory.buffer, this.outOffset * 4, this.count).slice();
    }
    const f = Math.fround;
    const out = new Float32Array(this.count);
    for (let n = 0; n < this.count; n++) {
      if (groups[Math.floor(n / LANES)] === 0) continue;
      const base = Math.floor(n / LANES) * LANES * this.dim + (n % LANES);
      let s = 0;
      for (let i = 0; i < this.dim; i++) s = f(s + f((this.data[base + i * LANES] as number) * (q[i] as number)));
      out[n] = s;
    }
    return out;
  }
}
