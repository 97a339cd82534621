import type { MessageBus } from '@kb/platform/messaging';
import type { Embedder } from '../pipeline/analysis/embedder';
import type { KbEmbeddersService } from './kb-embedders.service';
import { QueryEmbeddingService } from './query-embedding.service';

describe('QueryEmbeddingService', () => {
  const calls: { text: string; background: boolean }[] = [];
  const embedder: Embedder = {
    model: 'm',
    dimensions: 2,
    similarity: 'DOT',
    threshold: 0.3,
    embedPassages: async (texts) => texts.map(() => [1, 0]),
    embedQuery: async (text, o) => {
      calls.push({ text, background: o?.background === true });
      return [0, 1];
    },
    close: async () => undefined,
  };
  const embedders = { forVectorset: async () => embedder, all: async () => [embedder] } as unknown as KbEmbeddersService;
  const service = new QueryEmbeddingService({} as MessageBus, embedders);

  beforeEach(() => calls.splice(0));

  it('embeds a query once and answers it again from its cache', async () => {
    const first = await service.embed({ kbid: 'kb', text: 'what causes tides?' });
    const again = await service.embed({ kbid: 'kb', text: 'what causes tides?' });
    expect(again).toEqual(first);
    expect(calls).toEqual([{ text: 'what causes tides?', background: false }]);
  });

  it('embeds background texts (answers being scored) behind queries, never from or into the cache', async () => {
    await service.embed({ kbid: 'kb', text: 'the moon pulls the oceans', background: true });
    await service.embed({ kbid: 'kb', text: 'the moon pulls the oceans', background: true });
    expect(calls).toEqual([
      { text: 'the moon pulls the oceans', background: true },
      { text: 'the moon pulls the oceans', background: true },
    ]);
    // A query of the same text is not answered by the background vector's entry.
    await service.embed({ kbid: 'kb', text: 'the moon pulls the oceans' });
    expect(calls).toHaveLength(3);
    expect(calls[2]).toEqual({ text: 'the moon pulls the oceans', background: false });
  });
});
