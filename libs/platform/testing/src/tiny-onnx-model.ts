import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes a small but genuine sentence-embedding model folder in the Hugging Face layout
 * (`config.json`, `tokenizer.json`, `tokenizer_config.json`, `onnx/model.onnx`, and the
 * sentence-transformers `modules.json` / `1_Pooling/config.json`), for tests of the local ONNX
 * embedder: no weights can be downloaded here, so the test builds its own.
 *
 * The network is a BERT-shaped stand-in: `input_ids` and `attention_mask` in, `last_hidden_state`
 * out, computed as the token's embedding row times its attention mask. Every word of a topic shares
 * the topic's direction (plus a little of its own), so texts about one topic embed close together
 * even when they share no word — which is what a semantic test needs to tell a vector hit from a
 * keyword hit.
 */
export interface TinyOnnxModelOptions {
  /** Topic name → its words (lower case, no spaces). */
  topics: Record<string, string[]>;
  /** Vector length; default 16. */
  dimensions?: number;
  pooling?: 'mean' | 'cls';
  /** Written to config_sentence_transformers.json `prompts` when given. */
  prompts?: { query?: string; passage?: string };
  /** Longest input in tokens (tokenizer_config `model_max_length`); default 128. */
  maxLength?: number;
}

export interface TinyOnnxModel {
  folder: string;
  dimensions: number;
  vocabulary: string[];
}

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'];

export function writeTinyOnnxModel(folder: string, options: TinyOnnxModelOptions): TinyOnnxModel {
  const dims = options.dimensions ?? 16;
  const topicNames = Object.keys(options.topics);
  if (topicNames.length > dims) throw new Error('a tiny model needs at least one dimension per topic');
  const words = [...new Set(topicNames.flatMap((t) => options.topics[t] ?? []))];
  const vocabulary = [...SPECIAL, ...words];
  const table = new Float32Array(vocabulary.length * dims);
  const random = seeded(7);
  vocabulary.forEach((token, row) => {
    const topic = topicNames.findIndex((t) => (options.topics[t] ?? []).includes(token));
    for (let d = 0; d < dims; d++) {
      // Special and unknown tokens carry little signal; topic words point along their topic's axis.
      const own = (random() - 0.5) * 0.3;
      table[row * dims + d] = topic >= 0 && d === topic ? 1 + own : own * (row < SPECIAL.length ? 0.3 : 1);
    }
  });

  mkdirSync(join(folder, 'onnx'), { recursive: true });
  mkdirSync(join(folder, '1_Pooling'), { recursive: true });
  writeFileSync(join(folder, 'onnx', 'model.onnx'), modelBytes(table, vocabulary.length, dims));
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({ model_type: 'bert', hidden_size: dims, max_position_embeddings: 512, vocab_size: vocabulary.length }),
  );
  writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocabulary)));
  writeFileSync(
    join(folder, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: options.maxLength ?? 128,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
    }),
  );
  writeFileSync(
    join(folder, 'modules.json'),
    JSON.stringify([
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
      { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
    ]),
  );
  const pooling = options.pooling ?? 'mean';
  writeFileSync(
    join(folder, '1_Pooling', 'config.json'),
    JSON.stringify({
      word_embedding_dimension: dims,
      pooling_mode_cls_token: pooling === 'cls',
      pooling_mode_mean_tokens: pooling === 'mean',
      pooling_mode_max_tokens: false,
    }),
  );
  if (options.prompts)
    writeFileSync(
      join(folder, 'config_sentence_transformers.json'),
      JSON.stringify({ prompts: options.prompts, default_prompt_name: null }),
    );
  return { folder, dimensions: dims, vocabulary };
}

/**
 * Writes a small but genuine cross-encoder folder (a sequence-classification export: `input_ids`,
 * `attention_mask`, `token_type_ids` in, `logits` [batch, 1] out) for tests of the cross-encoder
 * reranker. Its logit is the sum of the given weights of the passage's words (the second text of
 * the pair; unknown words weigh 0), so a test knows which passage the model prefers whatever the
 * query's words.
 */
export function writeTinyCrossEncoder(folder: string, options: { weights: Record<string, number>; maxLength?: number }): TinyOnnxModel {
  const words = Object.keys(options.weights);
  const vocabulary = [...SPECIAL, ...words];
  const table = Float32Array.from(vocabulary, (w) => options.weights[w] ?? 0);
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  writeFileSync(join(folder, 'onnx', 'model.onnx'), crossEncoderBytes(table));
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({ model_type: 'bert', architectures: ['BertForSequenceClassification'], num_labels: 1, max_position_embeddings: 512 }),
  );
  writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocabulary)));
  writeFileSync(
    join(folder, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: options.maxLength ?? 128 }),
  );
  return { folder, dimensions: 1, vocabulary };
}

function tokenizerJson(vocabulary: string[]): Record<string, unknown> {
  const id = (t: string) => vocabulary.indexOf(t);
  const special = (t: string) => ({
    id: id(t),
    content: t,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocabulary.map((t, i) => [t, i])),
    },
  };
}

// ---- ONNX protobuf (onnx.proto field numbers), enough for one small graph ----

const FLOAT = 1;
const INT64 = 7;

function modelBytes(table: Float32Array, rows: number, dims: number): Buffer {
  const ids = valueInfo('input_ids', INT64, ['batch', 'sequence']);
  const mask = valueInfo('attention_mask', INT64, ['batch', 'sequence']);
  const out = valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', dims]);
  const embeddings = tensor('embeddings', FLOAT, [rows, dims], Buffer.from(table.buffer, table.byteOffset, table.byteLength));
  const lastAxis = Buffer.alloc(8);
  lastAxis.writeBigInt64LE(-1n);
  const axes = tensor('unsqueeze_axes', INT64, [1], lastAxis);
  const nodes = [
    node('Gather', ['embeddings', 'input_ids'], ['token_vectors'], [attrInt('axis', 0)]),
    node('Cast', ['attention_mask'], ['mask_float'], [attrInt('to', FLOAT)]),
    node('Unsqueeze', ['mask_float', 'unsqueeze_axes'], ['mask_3d']),
    node('Mul', ['token_vectors', 'mask_3d'], ['last_hidden_state']),
  ];
  const graph = Buffer.concat([
    ...nodes.map((n) => field(1, n)),
    field(2, Buffer.from('tiny-encoder')),
    field(5, embeddings),
    field(5, axes),
    field(11, ids),
    field(11, mask),
    field(12, out),
  ]);
  const opset = Buffer.concat([field(1, Buffer.from('')), varintField(2, 13)]);
  return Buffer.concat([varintField(1, 8), field(2, Buffer.from('kb-tests')), field(7, graph), field(8, opset)]);
}

function crossEncoderBytes(weights: Float32Array): Buffer {
  const inputs = ['input_ids', 'attention_mask', 'token_type_ids'].map((n) => valueInfo(n, INT64, ['batch', 'sequence']));
  const out = valueInfo('logits', FLOAT, ['batch', 1]);
  const table = tensor('weights', FLOAT, [weights.length, 1], Buffer.from(weights.buffer, weights.byteOffset, weights.byteLength));
  const lastAxis = Buffer.alloc(8);
  lastAxis.writeBigInt64LE(-1n);
  const sequenceAxis = Buffer.alloc(8);
  sequenceAxis.writeBigInt64LE(1n);
  const nodes = [
    node('Gather', ['weights', 'input_ids'], ['token_weights'], [attrInt('axis', 0)]),
    node('Cast', ['attention_mask'], ['mask_float'], [attrInt('to', FLOAT)]),
    node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']),
    node('Cast', ['token_type_ids'], ['type_float'], [attrInt('to', FLOAT)]),
    node('Unsqueeze', ['type_float', 'last_axis'], ['type_3d']),
    node('Mul', ['token_weights', 'mask_3d'], ['masked']),
    node('Mul', ['masked', 'type_3d'], ['passage_weights']),
    node('ReduceSum', ['passage_weights', 'sequence_axis'], ['logits'], [attrInt('keepdims', 0)]),
  ];
  const graph = Buffer.concat([
    ...nodes.map((n) => field(1, n)),
    field(2, Buffer.from('tiny-cross-encoder')),
    field(5, table),
    field(5, tensor('last_axis', INT64, [1], lastAxis)),
    field(5, tensor('sequence_axis', INT64, [1], sequenceAxis)),
    ...inputs.map((i) => field(11, i)),
    field(12, out),
  ]);
  const opset = Buffer.concat([field(1, Buffer.from('')), varintField(2, 13)]);
  return Buffer.concat([varintField(1, 8), field(2, Buffer.from('kb-tests')), field(7, graph), field(8, opset)]);
}

function node(op: string, inputs: string[], outputs: string[], attributes: Buffer[] = []): Buffer {
  return Buffer.concat([
    ...inputs.map((i) => field(1, Buffer.from(i))),
    ...outputs.map((o) => field(2, Buffer.from(o))),
    field(3, Buffer.from(`${op}_${outputs[0]}`)),
    field(4, Buffer.from(op)),
    ...attributes.map((a) => field(5, a)),
  ]);
}

function attrInt(name: string, value: number): Buffer {
  // AttributeProto: name = 1, i = 3, type = 20 (INT = 2).
  return Buffer.concat([field(1, Buffer.from(name)), varintField(3, value), varintField(20, 2)]);
}

function tensor(name: string, type: number, dims: number[], raw: Buffer): Buffer {
  return Buffer.concat([...dims.map((d) => varintField(1, d)), varintField(2, type), field(8, Buffer.from(name)), field(9, raw)]);
}

function valueInfo(name: string, elemType: number, shape: (number | string)[]): Buffer {
  const dims = shape.map((d) => field(1, typeof d === 'number' ? varintField(1, d) : field(2, Buffer.from(d))));
  const tensorType = Buffer.concat([varintField(1, elemType), field(2, Buffer.concat(dims))]);
  return Buffer.concat([field(1, Buffer.from(name)), field(2, field(1, tensorType))]);
}

function field(no: number, bytes: Buffer): Buffer {
  return Buffer.concat([varint((no << 3) | 2), varint(bytes.length), bytes]);
}

function varintField(no: number, value: number): Buffer {
  return Buffer.concat([varint(no << 3), varint(value)]);
}

function varint(value: number): Buffer {
  // Negative int64 values are ten bytes of two's complement.
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}
