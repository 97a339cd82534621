import { encodeFloat32, type EmbedQueryRequest, type EmbedQueryResponse } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { DataSource } from 'typeorm';
import { SearchContextService } from './search-context.service';

describe('SearchContextService.embedQuery', () => {
  const asked: EmbedQueryRequest[] = [];
  let answer: (req: EmbedQueryRequest) => EmbedQueryResponse;
  const bus = {
    request: async (_def: unknown, payload: EmbedQueryRequest) => {
      asked.push(payload);
      return answer(payload);
    },
  } as unknown as MessageBus;
  const context = new SearchContextService({} as DataSource, bus);
  const base = { vectorset: 'm', similarity: 'DOT' as const, threshold: 0.35 };

  beforeEach(() => asked.splice(0));

  it('asks for float32 and reads the vector from its base64 text', async () => {
    answer = () => ({ ...base, vector: [], vector_f32: encodeFloat32([0.1, -0.25, 1 / 3]) });
    const res = await context.embedQuery('kb', 'what causes tides?', 'm');
    expect(asked).toEqual([{ kbid: 'kb', text: 'what causes tides?', encoding: 'float32', vectorset: 'm' }]);
    expect(res).toEqual({ ...base, vector: [0.1, -0.25, 1 / 3].map(Math.fround) });
  });

  it('keeps the numbers of an answer without float32 text (a responder that ignores the encoding)', async () => {
    answer = () => ({ ...base, vector: [0.5, 0.5] });
    expect(await context.embedQuery('kb', 'q')).toEqual({ ...base, vector: [0.5, 0.5] });
    expect(asked[0]).toEqual({ kbid: 'kb', text: 'q', encoding: 'float32' });
  });

  it('fails on float32 text that is not whole float32 values', async () => {
    answer = () => ({ ...base, vector: [], vector_f32: Buffer.from([1, 2, 3]).toString('base64') });
    await expect(context.embedQuery('kb', 'q')).rejects.toThrow(RangeError);
  });
});
