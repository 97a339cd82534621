import { decodeFloat32 } from '@kb/contracts';
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
      return text === 'third' ? [1 / 3, -2 / 3] : [0, 1];
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

  it('answers in float32 base64 when asked, from the cache too, with the float32 values of the vector', async () => {
    const plain = await service.embed({ kbid: 'kb', text: 'third' });
    const packed = await service.embed({ kbid: 'kb', text: 'third', encoding: 'float32' });
    expect(calls).toHaveLength(1);
    expect(packed).toMatchObject({ vectorset: 'm', similarity: 'DOT', threshold: 0.3, vector: [] });
    expect(decodeFloat32(packed.vector_f32 as string)).toEqual(plain.vector.map(Math.fround));
    expect(plain.vector_f32).toBeUndefined();
    // The cached entry keeps its numbers for callers that did not ask.
    expect((await service.embed({ kbid: 'kb', text: 'third' })).vector).toEqual([1 / 3, -2 / 3]);
  });
});
