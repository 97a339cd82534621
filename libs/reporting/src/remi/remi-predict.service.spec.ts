import type { MessageBus } from '@kb/platform/messaging';
import { DEFAULT_REPORTING_OPTIONS } from '../reporting.tokens';
import { RemiPredictService } from './remi-predict.service';

describe('RemiPredictService (predict/remi)', () => {
  const bus = {
    request: jest.fn(async () => {
      throw new Error('no model here');
    }),
  } as unknown as MessageBus;
  const service = new RemiPredictService(bus, { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false });

  it('scores what the inputs allow: every metric with question, answer and contexts', async () => {
    const res = await service.evaluate({
      question: 'What causes the tides?',
      answer: 'The moon causes the tides.',
      contexts: ['The moon pulls the oceans and causes the tides.', 'Bread rises in the oven.'],
    });
    expect(res.answer_relevance?.score).toBeGreaterThanOrEqual(3);
    expect(res.context_relevance).toHaveLength(2);
    expect((res.context_relevance as number[])[0]).toBeGreaterThan((res.context_relevance as number[])[1] as number);
    expect(res.groundedness).toEqual([5]);
    expect(res.time).toBeGreaterThanOrEqual(0);
    expect(bus.request).not.toHaveBeenCalled();
  });

  it('leaves null what cannot be computed, and refuses a request with nothing', async () => {
    expect(await service.evaluate({ question: 'q', answer: 'a' })).toMatchObject({ context_relevance: null, groundedness: null });
    expect(await service.evaluate({ answer: 'a', contexts: ['a'] })).toMatchObject({ answer_relevance: null, context_relevance: null });
    await expect(service.evaluate({})).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it("falls back to lexical scores when the KB's built-in model cannot be asked", async () => {
    const semantic = new RemiPredictService(bus, { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: true });
    const res = await semantic.evaluate({ kbid: 'kb', question: 'tides?', answer: 'The moon.', contexts: ['The moon causes tides.'] });
    expect(bus.request).toHaveBeenCalled();
    expect(res.context_relevance).toHaveLength(1);
  });
});
