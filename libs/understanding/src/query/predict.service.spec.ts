import type { MessageBus } from '@kb/platform/messaging';
import type { Embedder } from '../pipeline/analysis/embedder';
import type { UnderstandingOptions } from '../understanding.tokens';
import { KbEmbeddersService } from './kb-embedders.service';
import { PredictService } from './predict.service';

/** A two-dimensional toy model: passages and queries get different vectors, so the prompt choice shows. */
const toy: Embedder = {
  model: 'toy',
  dimensions: 2,
  similarity: 'COSINE',
  threshold: 0.3,
  embedPassages: async (texts) => texts.map((t) => [t.length, 1]),
  embedQuery: async (t) => [t.length, 0],
  close: async () => undefined,
};

describe('PredictService (understanding)', () => {
  const bus = {} as MessageBus;
  const options = { consumeJobs: false, concurrency: 1, maxAttempts: 1, embedderFactory: () => toy } as UnderstandingOptions;
  const service = new PredictService(bus, new KbEmbeddersService(bus, options), options);

  it('embeds queries with the query method and batches with the passage method, naming the model and its threshold', async () => {
    expect(await service.embed({ kbid: 'kb', texts: ['abc'], input: 'query' })).toEqual({
      model: 'toy',
      vectors: [[3, 0]],
      similarity: 'COSINE',
      threshold: 0.3,
      thresholds: { toy: 0.3 },
    });
    expect((await service.embed({ texts: ['a', 'bb'], input: 'passage' })).vectors).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('refuses a model the KB does not have, naming the ones it has', async () => {
    await expect(service.embed({ kbid: 'kb', texts: ['a'], vectorset: 'nope', input: 'query' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { detail: [expect.objectContaining({ loc: ['query', 'model'], msg: expect.stringContaining('toy') })] },
    });
  });

  it('finds entities with offsets into the text, and its language', () => {
    const text = 'Write to ada@example.com before Monday.';
    const res = service.tokens({ text });
    expect(res.language).toBe('en');
    const email = res.tokens.find((t) => t.ner === 'EMAIL');
    expect(email && text.slice(email.start, email.end)).toBe('ada@example.com');
  });
});
