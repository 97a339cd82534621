import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MessageBus } from '@kb/platform/messaging';
import { writeTinyCrossEncoder } from '@kb/platform/testing';
import { toHttpError } from '@kb/platform/errors';
import type { UnderstandingOptions } from '../understanding.tokens';
import { OnnxCrossEncoder } from './onnx.cross-encoder';
import { RerankService } from './rerank.service';

/** The tiny model's logit is the sum of its passage words' weights: pears are relevant, cars are not. */
const WEIGHTS = { pears: 3, ripe: 1, apples: 0.5, cars: -2 };

describe('cross-encoder reranker (understanding.query.rerank)', () => {
  let dir: string;
  const open: { close(): Promise<void> }[] = [];
  const service = (rerankerModelDir?: string) => {
    const s = new RerankService(
      {} as MessageBus,
      { consumeJobs: false, concurrency: 1, maxAttempts: 1, rerankerModelDir } as UnderstandingOptions,
    );
    open.push({ close: () => s.onApplicationShutdown() });
    return s;
  };

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cross-encoder-'))));
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("scores each passage with the model, in the passages' order, and the order follows the model", async () => {
    const model = writeTinyCrossEncoder(join(dir, 'tiny-reranker'), { weights: WEIGHTS });
    const texts = ['apples and cars', 'ripe pears', 'nothing known here', 'cars'];
    const { model: name, scores } = await service(model.folder).rerank({ query: 'which fruit is ripe', texts });
    expect(name).toBe('tiny-reranker');
    // sigmoid(sum of the passage's weights): the query's own words (type 0) do not count.
    const expected = [-1.5, 4, 0, -2].map((l) => 1 / (1 + Math.exp(-l)));
    scores.forEach((s, i) => expect(s).toBeCloseTo(expected[i] as number, 5));
    const order = texts.map((t, i) => [t, scores[i] as number] as const).sort((a, b) => b[1] - a[1]);
    expect(order.map(([t]) => t)).toEqual(['ripe pears', 'nothing known here', 'apples and cars', 'cars']);
  });

  it('gives a pair the same score whatever it is batched and padded with', async () => {
    const model = writeTinyCrossEncoder(join(dir, 'm'), { weights: WEIGHTS });
    const texts = ['pears', 'ripe pears and apples and more apples', 'cars', 'apples'];
    const batched = new OnnxCrossEncoder({ folder: model.folder, maxBatch: 2 });
    open.push(batched);
    const all = await batched.score('fruit', texts);
    for (const [i, t] of texts.entries()) expect((await batched.score('fruit', [t]))[0]).toBeCloseTo(all[i] as number, 6);
    expect(await batched.score('fruit', [])).toEqual([]);
  });

  it('cuts a long pair to the model length, keeping its closing token', async () => {
    const model = writeTinyCrossEncoder(join(dir, 'm'), { weights: WEIGHTS, maxLength: 8 });
    // [CLS] q [SEP] then 4 passage tokens and [SEP]: the pears beyond the cut do not count.
    const {
      scores: [cut],
    } = await service(model.folder).rerank({ query: 'q', texts: ['apples apples apples apples pears pears pears'] });
    expect(cut).toBeCloseTo(1 / (1 + Math.exp(-2)), 5);
  });

  it('without RERANKER_MODEL_DIR: a 422 naming the setting, never a 500', async () => {
    const err = await service(undefined)
      .rerank({ query: 'q', texts: ['pears'] })
      .catch((e: unknown) => e);
    expect(toHttpError(err)).toMatchObject({
      status: 422,
      body: { detail: [expect.objectContaining({ loc: ['body', 'reranker'], msg: expect.stringContaining('RERANKER_MODEL_DIR') })] },
    });
  });

  it('a folder that cannot be used is a 503 saying why, and is picked up once fixed', async () => {
    const folder = join(dir, 'late');
    const s = service(folder);
    const status = async () => toHttpError(await s.rerank({ query: 'q', texts: ['pears'] }).catch((e: unknown) => e));
    expect(await status()).toMatchObject({ status: 503, body: { detail: expect.stringContaining('does not exist') } });
    writeTinyCrossEncoder(folder, { weights: WEIGHTS });
    unlinkSync(join(folder, 'tokenizer.json'));
    expect(await status()).toMatchObject({ status: 503, body: { detail: expect.stringContaining('tokenizer.json is missing') } });
    writeTinyCrossEncoder(folder, { weights: WEIGHTS });
    writeFileSync(join(folder, 'onnx', 'model.onnx'), Buffer.from('not a model'));
    expect(await status()).toMatchObject({ status: 503, body: { detail: expect.stringContaining('ONNX graph cannot be loaded') } });
    writeTinyCrossEncoder(folder, { weights: WEIGHTS });
    expect((await s.rerank({ query: 'q', texts: ['pears'] })).scores[0]).toBeGreaterThan(0.9);
  });
});
