import { USE_LITE_TOKENIZER_SOURCE } from './use-lite-tokenizer.source';
import { NO_NETWORK_SOURCE } from './use-lite-worker.source';

/**
 * JavaScript run in an embedding worker thread by `use-lite-pool.ts` with the default engine
 * (EMBEDDING_ENGINE=onnx): the built-in model as the ONNX graph of use-lite-onnx.ts, on ONNX
 * Runtime with one intra-op thread (the pool has one worker per core). A string for the reasons
 * use-lite-worker.source.ts gives; same messages, same answers, no network either.
 *
 * The tokenizer is the package's SentencePiece vocabulary (vocab.json) in the trie the package
 * builds (its first 6 entries are reserved symbols, never matched), encoded by our fast encoder
 * (use-lite-tokenizer.source.ts). The model's bytes come from the pool once it has built them (a
 * `{ setup }` message, before or after the first texts): the pool builds them once per process.
 *
 * The worker is never terminated from outside while ONNX Runtime works: a run or a session load
 * finishes on a native thread and then calls back into the worker's JavaScript; if the worker was
 * terminated meanwhile, that call-back throws a C++ exception nothing catches, and the whole process
 * aborts (SIGABRT: "terminate called after throwing an instance of 'Napi::Error'"). The pool sends
 * `{ stop: true }` instead: the worker answers nothing more, waits for what ONNX Runtime is doing,
 * releases the session and exits by itself.
 *
 * In:  workerData { ortPath, vocabPath }
 *      messages { setup: Uint8Array (ModelProto), maxTokens } | { setupError } | { id, texts: string[] } | { stop: true }
 * Out: { id, ok: true, dims, data: Float32Array (texts × dims, row-major) } | { id, ok: false, message }
 */
export const USE_LITE_ONNX_WORKER_SOURCE = String.raw`
${NO_NETWORK_SOURCE}
${USE_LITE_TOKENIZER_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');

// The package's Tokenizer keeps its first 6 vocabulary entries out of the trie (RESERVED_SYMBOLS_COUNT).
const RESERVED_SYMBOLS = 6;
const PAD_BIAS = -1e9;

function createTokenizer(vocabulary) {
  const node = () => ({ children: {}, end: false, word: [null, 0, 0] });
  const root = node();
  for (let i = RESERVED_SYMBOLS; i < vocabulary.length; i++) {
    let at = root;
    for (const symbol of vocabulary[i][0]) at = at.children[symbol] || (at.children[symbol] = node());
    if (at === root) continue;
    at.end = true;
    at.word[1] = vocabulary[i][1];
    at.word[2] = i;
  }
  // installFastEncode replaces encode (it checks there is one to replace).
  const tokenizer = { trie: { root }, vocabulary, encode: () => { throw new Error('no encoder'); } };
  if (!installFastEncode(tokenizer)) throw new Error('the vocabulary is not a SentencePiece vocabulary');
  return tokenizer;
}

let resolveSetup;
let rejectSetup;
const setup = new Promise((resolve, reject) => { resolveSetup = resolve; rejectSetup = reject; });
setup.catch(() => undefined);

let loading;
function load() {
  loading ??= (async () => {
    const ort = require(workerData.ortPath);
    const tokenizer = createTokenizer(JSON.parse(fs.readFileSync(workerData.vocabPath, 'utf8')));
    const { bytes, maxTokens } = await setup;
    // ONNX Runtime takes bytes in an ArrayBuffer, not the pool's SharedArrayBuffer: a copy it reads once.
    const session = await ort.InferenceSession.create(new Uint8Array(bytes), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return { ort, tokenizer, session, maxTokens };
  })();
  loading.catch(() => { loading = undefined; });
  return loading;
}

async function embed(texts) {
  const { ort, tokenizer, session, maxTokens } = await load();
  // The TF graph keeps each text's first maxTokens tokens (ClipToMaxLength) and pads to the longest.
  const encoded = texts.map((t) => tokenizer.encode(t).slice(0, maxTokens));
  const batch = texts.length;
  const tokens = Math.max(1, ...encoded.map((e) => e.length));
  const ids = new BigInt64Array(batch * tokens);
  const positions = new BigInt64Array(batch * tokens);
  const bias = new Float32Array(batch * tokens).fill(PAD_BIAS);
  const mask = new Float32Array(batch * tokens);
  const lengths = new Float32Array(batch);
  encoded.forEach((e, b) => {
    for (let j = 0; j < e.length; j++) {
      const at = b * tokens + j;
      ids[at] = BigInt(e[j]);
      positions[at] = BigInt(j);
      bias[at] = 0;
      mask[at] = 1;
    }
    lengths[b] = Math.max(1, e.length);
  });
  const out = await session.run({
    ids: new ort.Tensor('int64', ids, [batch, tokens]),
    positions: new ort.Tensor('int64', positions, [batch, tokens]),
    bias: new ort.Tensor('float32', bias, [batch, 1, 1, tokens]),
    mask: new ort.Tensor('float32', mask, [batch, tokens, 1]),
    lengths: new ort.Tensor('float32', lengths, [batch, 1]),
  });
  const result = out.embeddings;
  const data = Float32Array.from(result.data);
  result.dispose?.();
  return { dims: result.dims[1], data };
}

// Model calls not finished yet: a stop waits for them (see above).
const running = new Set();
let stopping = false;

async function stop() {
  stopping = true;
  // A load still waiting for the model's bytes need not wait for them.
  rejectSetup(new Error('stopping'));
  await Promise.allSettled([...running]);
  const loaded = loading && (await loading.catch(() => undefined));
  if (loaded) await loaded.session.release().catch(() => undefined);
  process.exit(0);
}

parentPort.on('message', async (message) => {
  if (message.setup) return resolveSetup({ bytes: message.setup, maxTokens: message.maxTokens });
  if (message.setupError) return rejectSetup(new Error(message.setupError));
  if (message.stop) return stop();
  if (stopping) return;
  const { id, texts } = message;
  const call = embed(texts);
  running.add(call);
  call.catch(() => undefined).finally(() => running.delete(call));
  try {
    const { dims, data } = await call;
    if (stopping) return;
    if (data.length !== texts.length * dims) throw new Error('the model returned ' + data.length / dims + ' vectors for ' + texts.length + ' texts');
    parentPort.postMessage({ id, ok: true, dims, data }, [data.buffer]);
  } catch (err) {
    if (!stopping) parentPort.postMessage({ id, ok: false, message: String(err && err.message ? err.message : err) });
  }
});
`;
