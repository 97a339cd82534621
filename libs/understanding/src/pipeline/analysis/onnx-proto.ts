/**
 * The few messages of ONNX's protobuf schema (onnx.proto) that a graph built in code needs, written
 * to bytes ONNX Runtime loads (`InferenceSession.create(bytes)`): models, graphs, nodes with int,
 * float and int-list attributes, float32 / int64 tensors (raw little-endian data) and tensor types
 * with fixed or named dimensions. Field numbers are onnx.proto's; repeated scalars are written
 * unpacked, which every protobuf reader accepts.
 */

export const ONNX_FLOAT = 1;
export const ONNX_INT64 = 7;

export interface OnnxTensor {
  name: string;
  dataType: typeof ONNX_FLOAT | typeof ONNX_INT64;
  dims: number[];
  /** float32 data for ONNX_FLOAT, int64 values for ONNX_INT64. */
  data: Float32Array | BigInt64Array;
}

export type OnnxAttribute = { name: string } & ({ i: number } | { f: number } | { ints: number[] });

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: OnnxAttribute[];
}

export interface OnnxValueInfo {
  name: string;
  dataType: typeof ONNX_FLOAT | typeof ONNX_INT64;
  /** A number is a fixed size; a string names a dimension given at run time. */
  dims: (number | string)[];
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

/**
 * Protobuf's wire encodings into a list of parts: large byte fields (the weights) are kept by
 * reference and copied once, into the final buffer; a nested message's length is its parts' total.
 */
class Writer {
  private readonly parts: Uint8Array[] = [];
  private scratch = new Uint8Array(256);
  private used = 0;
  length = 0;

  private flush(): void {
    if (!this.used) return;
    this.parts.push(this.scratch.slice(0, this.used));
    this.used = 0;
  }

  private room(n: number): void {
    if (this.used + n <= this.scratch.length) return;
    this.flush();
    if (n > this.scratch.length) this.scratch = new Uint8Array(n);
  }

  /** An unsigned varint (a negative int64 is written as its 64-bit two's complement). */
  varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    this.room(10);
    while (v >= 0x80n) {
      this.scratch[this.used++] = Number(v & 0x7fn) | 0x80;
      this.length++;
      v >>= 7n;
    }
    this.scratch[this.used++] = Number(v);
    this.length++;
  }

  tag(field: number, wireType: 0 | 2 | 5): void {
    this.varint((field << 3) | wireType);
  }

  int(field: number, value: number | bigint): void {
    this.tag(field, 0);
    this.varint(value);
  }

  float(field: number, value: number): void {
    this.tag(field, 5);
    this.room(4);
    new DataView(this.scratch.buffer).setFloat32(this.used, value, true);
    this.used += 4;
    this.length += 4;
  }

  bytes(field: number, data: Uint8Array): void {
    this.tag(field, 2);
    this.varint(data.length);
    this.raw(data);
  }

  string(field: number, value: string): void {
    this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, write: (w: Writer) => void): void {
    const inner = new Writer();
    write(inner);
    inner.flush();
    this.tag(field, 2);
    this.varint(inner.length);
    for (const part of inner.parts) this.raw(part);
  }

  private raw(data: Uint8Array): void {
    if (data.length > 1024) {
      this.flush();
      this.parts.push(data);
    } else {
      this.room(data.length);
      this.scratch.set(data, this.used);
      this.used += data.length;
    }
    this.length += data.length;
  }

  finish(shared = false): Uint8Array {
    this.flush();
    const out = new Uint8Array(shared ? new SharedArrayBuffer(this.length) : new ArrayBuffer(this.length));
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

function tensor(w: Writer, t: OnnxTensor): void {
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.dataType);
  w.string(8, t.name);
  // raw_data: little-endian, as typed arrays are on every platform Node runs on.
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

function attribute(w: Writer, a: OnnxAttribute): void {
  w.string(1, a.name);
  if ('i' in a) {
    w.int(3, a.i);
    w.int(20, 2); // AttributeType INT
  } else if ('f' in a) {
    w.float(2, a.f);
    w.int(20, 1); // FLOAT
  } else {
    for (const v of a.ints) w.int(8, v);
    w.int(20, 7); // INTS
  }
}

function node(w: Writer, n: OnnxNode, index: number): void {
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, `${n.op}_${index}`);
  w.string(4, n.op);
  for (const a of n.attributes ?? []) w.message(5, (x) => attribute(x, a));
}

function valueInfo(w: Writer, v: OnnxValueInfo): void {
  w.string(1, v.name);
  // TypeProto.tensor_type { elem_type, shape { dim { dim_value | dim_param } } }
  w.message(2, (type) =>
    type.message(1, (t) => {
      t.int(1, v.dataType);
      t.message(2, (shape) => {
        for (const d of v.dims) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}

/**
 * The bytes of a ModelProto holding `graph`, for the default ONNX operator set `opset`; in a
 * SharedArrayBuffer when `shared` (worker threads then read one copy).
 */
export function encodeOnnxModel(graph: OnnxGraph, opset: number, producer: string, shared = false): Uint8Array {
  const w = new Writer();
  w.int(1, 8); // ir_version 8 (ONNX 1.10+), enough for opset 17
  w.string(2, producer);
  w.message(7, (g) => {
    graph.nodes.forEach((n, i) => g.message(1, (x) => node(x, n, i)));
    g.string(2, graph.name);
    for (const t of graph.initializers) g.message(5, (x) => tensor(x, t));
    for (const v of graph.inputs) g.message(11, (x) => valueInfo(x, v));
    for (const v of graph.outputs) g.message(12, (x) => valueInfo(x, v));
  });
  w.message(8, (o) => {
    o.string(1, '');
    o.int(2, opset);
  });
  return w.finish(shared);
}
