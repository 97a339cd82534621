import type { MessageBus } from '@kb/platform/messaging';
import { PredictService } from './predict.service';

/** The bus answers the KB's configuration only; nothing else is asked of it here. */
const busWith = (config: Record<string, unknown>) => ({ request: jest.fn(async () => config) }) as unknown as MessageBus;

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('PredictService', () => {
  it('scores context pieces in [0, 1], the one holding the whole question in order highest', () => {
    const service = new PredictService(busWith({}));
    const { context_scores: s } = service.rerank({
      question: 'what causes the tides',
      context: { all: 'The moon causes the tides.', some: 'Tides are high.', none: 'Bread rises.' },
    });
    expect(s['all']).toBeGreaterThan(s['some'] as number);
    expect(s['some']).toBeGreaterThan(s['none'] as number);
    expect(s['none']).toBe(0);
    expect(s['all']).toBeLessThanOrEqual(1);
  });

  it('answers a chat from its context with the extractive model, and from the system text when it has none', async () => {
    const service = new PredictService(busWith({}));
    const base = { kbid: 'kb', task: 'chat' as const, question: 'What causes the tides?', chat_history: [] };
    const withContext = await collect(
      service.generate({ ...base, context: [{ key: 'a', text: 'The moon causes the tides. Bread rises.' }] }),
    );
    expect(withContext[0]).toEqual({ type: 'text', text: 'The moon causes the tides.' });
    expect(withContext.at(-1)).toMatchObject({ type: 'done', model: 'extractive' });
    const fromSystem = await collect(service.generate({ ...base, context: [], system: 'The moon causes the tides.' }));
    expect(fromSystem[0]).toEqual({ type: 'text', text: 'The moon causes the tides.' });
  });

  it("names the KB's models, its generative model first, and the built-in ones without a KB", async () => {
    const configured = busWith({
      generative_model: 'chatgpt-4o-mini',
      semantic_models: ['a', 'b'],
      default_semantic_model: 'b',
      user_keys: {
        openai: { key: 'sk-x' },
        anthropic: { key: 'k', model: 'claude-3-5-haiku-latest' },
        openai_compatible: { url: 'http://e', model: 'toy-embed' },
      },
    });
    expect(await new PredictService(configured).models({ kbid: 'kb' })).toEqual({
      generative: 'chatgpt-4o-mini',
      semantic: ['b', 'a'],
      generative_providers: { builtin: ['extractive'], openai_compatible: ['chatgpt-4o-mini'] },
    });
    const bus = busWith({});
    expect(await new PredictService(bus).models({})).toEqual({
      generative: 'extractive',
      semantic: ['en-use-lite-2024'],
      generative_providers: { builtin: ['extractive'] },
    });
    expect(bus.request).not.toHaveBeenCalled();
  });

  it('refuses a configuration naming a provider model without its keys', async () => {
    const service = new PredictService(busWith({ generative_model: 'chatgpt-4o-mini' }));
    await expect(
      collect(service.generate({ kbid: 'kb', task: 'chat', question: 'q', context: [], chat_history: [] })),
    ).rejects.toMatchObject({ code: 'GENERATIVE_CONFIG_INVALID' });
  });
});
