import { AccountsSubjects, ContentSubjects, DomainError, type AskItem } from '@kb/contracts';
import { configureOutbound } from '@kb/platform/net';
import { eventually, startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { startSearchFixture, type SearchFixture } from './fixtures/search.fixture';

/** The answer options of /ask and /find that reach a model: rephrase, answer_json_schema, reasoning, relations. */
describe('/ask and /find answer options', () => {
  let fx: SearchFixture;
  let llm: FakeLlmServer;
  const offlineKb = '00000000-0000-4000-8000-0000000000e1';
  const openaiKb = '00000000-0000-4000-8000-0000000000e2';
  const anthropicKb = '00000000-0000-4000-8000-0000000000e3';
  const chats: Record<string, unknown>[] = [];

  beforeAll(async () => {
    fx = await startSearchFixture();
    llm = await startFakeLlmServer();
    configureOutbound({ policy: { allowCidrs: ['127.0.0.1'] } });
    await fx.bus.handle(AccountsSubjects.resolveKbConfig, async (req) => {
      if (req.kb_id === openaiKb)
        return {
          generative_model: 'gpt-test',
          user_keys: { openai_compat: { url: llm.openAiUrl, key: 'sk-test', model: 'gpt-test', timeout_ms: 1500 } },
        };
      if (req.kb_id === anthropicKb)
        return { generative_model: 'claude-test', user_keys: { anthropic: { url: llm.url, key: 'sk-ant', timeout_ms: 1500 } } };
      return { generative_model: 'extractive' };
    });
    await fx.bus.subscribe(ContentSubjects.auditBatch, async (batch) => {
      for (const e of batch.events) if (e.type === 'chat') chats.push(e.details as Record<string, unknown>);
    });
    for (const kb of [offlineKb, openaiKb, anthropicKb]) {
      await fx.addResource(kb, { title: 'Curie' }, 'Marie Curie worked in Paris on radium.\n\nShe won two Nobel prizes.', {
        ner: { 'Marie Curie': 'PERSON', Paris: 'PLACE', radium: 'OTHER' },
      });
      await fx.addResource(kb, { title: 'Bread' }, 'Yeast ferments the dough so the bread rises.');
    }
  }, 90_000);

  afterAll(async () => {
    await llm?.close();
    await fx?.close();
  });
  beforeEach(() => llm.reset());

  const ask = async (kbid: string, body: Record<string, unknown>): Promise<(AskItem & Record<string, unknown>)[]> => {
    const items: (AskItem & Record<string, unknown>)[] = [];
    for await (const item of fx.bus.requestStream(ContentSubjects.ask, { kbid, body, learning_id: `l-${Math.random()}` }))
      items.push(item as AskItem & Record<string, unknown>);
    return items;
  };
  const item = (items: (AskItem & Record<string, unknown>)[], type: string) =>
    items.find((i) => i.type === type) as Record<string, unknown> | undefined;
  const refusal = async (kbid: string, body: Record<string, unknown>) => {
    const err = await ask(kbid, body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    return ((err as DomainError).details?.['detail'] as { loc: (string | number)[]; type: string }[]).map((d) => [d.loc.join('.'), d.type]);
  };

  it('rephrases with the chat history by the rules when the KB has no provider: retrieval uses it, results and the chat event report it', async () => {
    const history = [
      { author: 'USER', text: 'Who was Marie Curie?' },
      { author: 'NUCLIA', text: 'A physicist.' },
    ];
    const items = await ask(offlineKb, { query: 'Where did she work?', chat_history: history, rephrase: true, features: ['keyword'] });
    const results = item(items, 'retrieval')?.['results'] as { query: string; rephrased_query: string; best_matches: string[] };
    expect(results).toMatchObject({ query: 'Where did she work?', rephrased_query: 'Where did Marie Curie work?' });
    expect(results.best_matches.length).toBeGreaterThan(0);
    expect(item(items, 'status')).toMatchObject({ status: 'success' });
    // Without rephrasing, "she" finds the other paragraph of the resource only by chance: the rephrased query names her.
    const plain = await ask(offlineKb, { query: 'Where did she work?', chat_history: history, features: ['keyword'] });
    expect((item(plain, 'retrieval')?.['results'] as { rephrased_query: unknown }).rephrased_query).toBeNull();
    await eventually(
      async () =>
        chats.some((c) => c['rephrased_question'] === 'Where did Marie Curie work?' && c['question'] === 'Where did she work?')
          ? true
          : undefined,
      10_000,
      'chat event',
    );
  });

  it('records the tokens a provider reported on the chat event (usage ai_tokens_used), none for the extractive answer', async () => {
    llm.enqueue({ chunks: ['Paris', '.'], usage: { input: 321, output: 7 } });
    await ask(openaiKb, { query: 'Where did Marie Curie work on radium?', features: ['keyword'] });
    const model = await eventually(
      async () => chats.find((c) => c['question'] === 'Where did Marie Curie work on radium?' && c['answer'] === 'Paris.'),
      10_000,
      'chat event with tokens',
    );
    expect(model).toMatchObject({ input_tokens: 321, output_tokens: 7 });
    await ask(offlineKb, { query: 'What makes the dough rise?', features: ['keyword'] });
    const offline = await eventually(
      async () => chats.find((c) => c['question'] === 'What makes the dough rise?'),
      10_000,
      'extractive chat event',
    );
    expect(offline).not.toHaveProperty('input_tokens');
    expect(offline).not.toHaveProperty('output_tokens');
  });

  it('rephrases through the provider with prompt.rephrase, then answers the original question with the rephrased retrieval', async () => {
    llm.enqueue({ chunks: ['Marie Curie workplace'] }, { chunks: ['In Paris.'] });
    const items = await ask(openaiKb, {
      query: 'Where did she work?',
      chat_history: [{ author: 'USER', text: 'Who was Marie Curie?' }],
      rephrase: true,
      prompt: { rephrase: 'Rewrite for search: {question}' },
    });
    expect((item(items, 'retrieval')?.['results'] as { rephrased_query: string }).rephrased_query).toBe('Marie Curie workplace');
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.requests[0]?.body)).toContain('Rewrite for search: Where did she work?');
    expect(JSON.stringify(llm.requests[1]?.body)).toContain('Question: Where did she work?');
    expect(
      items
        .filter((i) => i.type === 'answer')
        .map((i) => i['text'])
        .join(''),
    ).toBe('In Paris.');
  });

  it('falls back to the rules when the provider fails to rephrase, and reports the provider in the answer', async () => {
    llm.enqueue({ status: 500 }, { status: 500 });
    const items = await ask(openaiKb, {
      query: 'Where did she work?',
      chat_history: [{ author: 'USER', text: 'Who was Marie Curie?' }],
      rephrase: true,
    });
    expect((item(items, 'retrieval')?.['results'] as { rephrased_query: string }).rephrased_query).toBe('Where did Marie Curie work?');
    expect(item(items, 'status')).toMatchObject({ status: 'error' });
  });

  it("/find rephrases too, through the KB's provider or the rules", async () => {
    llm.enqueue({ chunks: ['radium Paris'] });
    const viaModel = (await fx.bus.request(ContentSubjects.find, {
      kbid: openaiKb,
      body: { query: 'what did she study', rephrase: true, rephrase_prompt: 'Keywords of {question}' },
    })) as unknown as { query: string; rephrased_query: string; best_matches: string[] };
    expect(viaModel).toMatchObject({ query: 'what did she study', rephrased_query: 'radium Paris' });
    expect(viaModel.best_matches[0]).toContain('/t/body/0-');
    const byRules = (await fx.bus.request(ContentSubjects.find, {
      kbid: offlineKb,
      body: { query: 'bread', rephrase: true },
    })) as unknown as { rephrased_query: string };
    expect(byRules.rephrased_query).toBe('bread');
  });

  it('answers following a JSON schema through OpenAI-compatible structured outputs: one answer_json item, no answer chunks, no citations', async () => {
    llm.enqueue({ chunks: ['{"city": ', '"Paris"}'] });
    const schema = { name: 'place', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
    const items = await ask(openaiKb, { query: 'Where did Marie Curie work?', answer_json_schema: schema });
    expect(items.map((i) => i.type)).toEqual(['answer_json', 'retrieval', 'status', 'augmented_context', 'metadata']);
    expect(item(items, 'answer_json')?.['object']).toEqual({ city: 'Paris' });
    expect((llm.requests[0]?.body as Record<string, unknown>)['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'place', schema: schema.parameters },
    });
  });

  it('answers following a JSON schema through an Anthropic tool call; a reply that is not an object is an error status', async () => {
    llm.enqueue({ chunks: ['{"city":', ' "Paris"}'] });
    const items = await ask(anthropicKb, {
      query: 'Where did Marie Curie work?',
      answer_json_schema: { type: 'object', properties: { city: { type: 'string' } } },
    });
    expect(item(items, 'answer_json')?.['object']).toEqual({ city: 'Paris' });
    expect((llm.requests[0]?.body as { tool_choice: unknown }).tool_choice).toEqual({ type: 'tool', name: 'answer' });
    llm.enqueue({ chunks: ['not json'] });
    const bad = await ask(openaiKb, { query: 'Where did Marie Curie work?', answer_json_schema: { type: 'object' } });
    expect(item(bad, 'answer_json')).toBeUndefined();
    expect(item(bad, 'status')).toMatchObject({ status: 'error', details: expect.stringContaining('not a JSON object') });
  });

  it('refuses answer_json_schema without a provider, and a bad schema or reasoning, before streaming', async () => {
    expect(await refusal(offlineKb, { query: 'q', answer_json_schema: { type: 'object' } })).toEqual([
      ['body.answer_json_schema', 'not_supported'],
    ]);
    expect(await refusal(openaiKb, { query: 'q', reasoning: { effort: 'huge' } })).toEqual([['body.reasoning.effort', 'enum']]);
    expect(
      await refusal(openaiKb, { query: 'q', answer_json_schema: { type: 'object', properties: { a: { $ref: 'http://x/y' } } } }),
    ).toEqual([['body.answer_json_schema', 'value_error']]);
    expect(llm.requests).toHaveLength(0);
  });

  it('asks for reasoning and streams it as reasoning items before the answer, unless display is false', async () => {
    llm.enqueue({ reasoning: ['Paris is ', 'named.'], chunks: ['Paris.'] }, { reasoning: ['hidden'], chunks: ['Paris.'] });
    const shown = await ask(anthropicKb, { query: 'Where did Marie Curie work?', reasoning: { budget_tokens: 2048 } });
    expect(
      shown
        .filter((i) => i.type === 'reasoning')
        .map((i) => i['text'])
        .join(''),
    ).toBe('Paris is named.');
    expect(shown.findIndex((i) => i.type === 'reasoning')).toBeLessThan(shown.findIndex((i) => i.type === 'answer'));
    expect((llm.requests[0]?.body as { thinking: unknown }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const hidden = await ask(openaiKb, { query: 'Where did Marie Curie work?', reasoning: { display: false, effort: 'low' } });
    expect(hidden.some((i) => i.type === 'reasoning')).toBe(false);
    expect((llm.requests[1]?.body as { reasoning_effort: unknown }).reasoning_effort).toBe('low');
    // The built-in model accepts the option and has no reasoning to show.
    const offline = await ask(offlineKb, { query: 'Where did Marie Curie work?', reasoning: true });
    expect(offline.some((i) => i.type === 'reasoning')).toBe(false);
    expect(item(offline, 'status')).toMatchObject({ status: 'success' });
  });

  it("adds the relations item (and the retrieval results' relations) with the relations feature", async () => {
    const items = await ask(offlineKb, { query: 'Where did Marie Curie work?', features: ['keyword', 'relations'] });
    const types = items.map((i) => i.type);
    expect(types.indexOf('relations')).toBeGreaterThan(types.indexOf('metadata'));
    const relations = item(items, 'relations')?.['relations'] as { entities: Record<string, { related_to: { entity: string }[] }> };
    expect(Object.keys(relations.entities)).toEqual(['Marie Curie']);
    expect(relations.entities['Marie Curie']?.related_to.map((r) => r.entity)).toEqual(expect.arrayContaining(['Paris', 'radium']));
    expect((item(items, 'retrieval')?.['results'] as { relations: unknown }).relations).toEqual(relations);
    const without = await ask(offlineKb, { query: 'Where did Marie Curie work?', features: ['keyword'] });
    expect(item(without, 'relations')).toBeUndefined();
  });
});
