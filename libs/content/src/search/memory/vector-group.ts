import { LANES, VectorBlock, norm2 } from './dot-kernel';

/** The vectors of one vectorset and dimension, with the paragraph ordinal of each. */
export interface VectorGroup {
  ords: Int32Array;
  block: VectorBlock;
  /** Sequential float32 sums of squares (cosine), computed once. */
  norms: Float32Array;
}

/** Bytes a vector group holds (its block, ordinals and norms). */
export function groupBytes(g: VectorGroup): number {
  return g.block.bytes + g.ords.byteLength + g.norms.byteLength;
}

/**
 * One vector group written as its vectors arrive, in ascending ordinal order, straight into its
 * interleaved block (see dot-kernel): a KB's million vectors are never held as a million arrays
 * next to the block. Sized up front (the KB's paragraph count bounds a vectorset's vectors), grown
 * by half when that was too few, and copied to its size at the end if much of it is unused.
 */
export class VectorGroupBuilder {
  private block: VectorBlock;
  private ords: Int32Array;
  private norms: Float32Array;
  private n = 0;
  private readonly scratch: Float32Array;

  constructor(
    readonly dim: number,
    capacity: number,
    o: { javascript?: boolean } = {},
  ) {
    const c = Math.max(LANES, capacity);
    this.block = new VectorBlock(dim, c, o);
    this.ords = new Int32Array(c);
    this.norms = new Float32Array(c);
    this.scratch = new Float32Array(dim);
  }

  get count(): number {
    return this.n;
  }

  /** Adds the vector of paragraph `ord` (float32 values, `dim` of them); ordinals must ascend. */
  add(ord: number, v: ArrayLike<number>): void {
    if (v.length !== this.dim) throw new RangeError(`a vector of ${v.length} in a group of ${this.dim}`);
    if (this.n > 0 && ord <= (this.ords[this.n - 1] as number)) throw new RangeError(`ordinal ${ord} after ${this.ords[this.n - 1]}`);
    if (this.n === this.block.capacity) this.grow(Math.ceil(this.n * 1.5));
    this.block.set(this.n, v);
    this.norms[this.n] = norm2(v);
    this.ords[this.n] = ord;
    this.n++;
  }

  /** Adds a vector in pgvector's binary send format (see vectorFromSend) without an array per vector. */
  addSend(ord: number, b: Uint8Array): void {
    this.add(ord, vectorFromSend(b, this.scratch));
  }

  done(): VectorGroup {
    this.block.truncate(this.n);
    if (this.n < this.block.capacity * 0.9) this.grow(this.n);
    return { ords: this.ords.slice(0, this.n), block: this.block, norms: this.norms.slice(0, this.n) };
  }

  private grow(capacity: number): void {
    this.block.truncate(this.n);
    this.block = this.block.resized(Math.max(capacity, 1));
    const ords = new Int32Array(capacity);
    ords.set(this.ords.subarray(0, this.n));
    this.ords = ords;
    const norms = new Float32Array(capacity);
    norms.set(this.norms.subarray(0, this.n));
    this.norms = norms;
  }
}

/**
 * A vector from pgvector's binary send format (int16 dimensions, int16 unused, big-endian float4s),
 * into `into` when given (it must have the vector's dimensions).
 */
export function vectorFromSend(b: Uint8Array, into?: Float32Array): Float32Array {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dim = sendDimension(b);
  if (into && into.length !== dim) throw new RangeError(`a vector of ${dim} read into ${into.length}`);
  const v = into ?? new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = view.getFloat32(4 + 4 * i);
  return v;
}

/** The dimensions of a vector in pgvector's binary send format (its leading int16). */
export function sendDimension(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint16(0);
}
