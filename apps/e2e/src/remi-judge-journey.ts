import { startFakeLlmServer } from '@kb/platform/testing';
import { bearer } from './support/http-client';
import type { Topology } from './support/topologies';

interface Remi {
  answer_relevance: { score: number; reason: string };
  context_relevance: number[];
  groundedness: number[];
}
interface RemiEvent {
  id: number;
  scorer: string;
  judge_error: string | null;
  remi: Remi;
  context: { key: string; text: string }[];
}

const SECRET = 'sk-remi-judge-e2e-secret-4711';
const QUESTION = 'What does a storm bring?';

/**
 * The REMi LLM judge end to end (docs/remi.md): a KB whose generative model is a provider (the
 * fake OpenAI-compatible server) has its answers graded by that model — reporting asks content
 * over the bus (`content.remi.judge`), content calls the provider with the KB's key — and scored
 * offline, with the reason recorded, when the judge answers something that is not the JSON asked
 * for. The provider's key appears in no route's answer.
 */
export async function remiJudgeJourney(topology: Topology, slug: string): Promise<void> {
  const { http } = topology;
  const boot = topology.bootstrap();
  const owner = bearer(boot.personal_access_token.token);
  const month = new Date().toISOString().slice(0, 7);
  // Every request is answered "The storm brings rain." unless a script is queued.
  const llm = await startFakeLlmServer({ chunks: ['The storm brings rain.'] });
  try {
    const created = await http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: owner,
      body: {
        slug,
        title: slug,
        learning_configuration: {
          generative_model: 'chatgpt-4o-mini',
          user_keys: { openai: { url: llm.openAiUrl, key: SECRET, timeout_ms: 10_000 } },
        },
      },
    });
    expect(created.status).toBe(201);
    const kb = (created.body.uuid ?? created.body.id) as string;
    expect(
      (
        await http.call('POST', `/api/v1/kb/${kb}/resources`, {
          credential: owner,
          body: { title: 'Storms', texts: { body: { body: 'A storm brings rain, wind and thunder over the sea.' } } },
        })
      ).status,
    ).toBe(201);
    await http.eventually(
      async () => {
        const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: owner,
        });
        return list.body.resources[0]?.metadata.status === 'PROCESSED' ? true : undefined;
      },
      120_000,
      'the resource processed',
    );
    const ask = async () =>
      expect(
        (
          await http.call('POST', `/api/v1/kb/${kb}/ask`, {
            credential: owner,
            headers: { 'x-synchronous': 'true' },
            body: { query: QUESTION },
          })
        ).status,
      ).toBe(200);
    const scored = (n: number) =>
      http.eventually(
        async () => {
          const r = await http.call<{ data: { id: number }[] }>('POST', `/api/v1/kb/${kb}/remi/query`, {
            credential: owner,
            body: { month },
          });
          return r.status === 200 && r.body.data.length >= n ? r.body.data : undefined;
        },
        90_000,
        `${n} scored answers`,
      );
    const event = async (id: number | undefined) =>
      (await http.call<RemiEvent>('GET', `/api/v1/kb/${kb}/remi/events/${id}`, { credential: owner })).body;

    // 1. The judge answers plain text (the default script): not the JSON asked for → offline.
    await ask();
    const [first] = await scored(1);
    const offline = await event(first?.id);
    expect(offline.scorer).toMatch(/^offline:/);
    expect(offline.judge_error).toBe('malformed');
    const judgeRequest = llm.requests.find((r) => JSON.stringify(r.body).includes('remi_scores'));
    expect(judgeRequest?.body['response_format']).toMatchObject({ type: 'json_schema' });
    expect(judgeRequest?.headers['authorization']).toBe(`Bearer ${SECRET}`);

    // 2. The same question (the same context): the answer, then the judge's scores.
    const pieces = offline.context.length;
    const judgement: Remi = {
      answer_relevance: { score: 4, reason: 'The answer says what a storm brings.' },
      context_relevance: Array.from({ length: pieces }, (_, i) => (i === 0 ? 5 : 2)),
      groundedness: [5],
    };
    llm.enqueue({ chunks: ['The storm brings rain.'] }, { chunks: [JSON.stringify(judgement)] });
    await ask();
    const both = await scored(2);
    const judged = await event(both[1]?.id);
    expect(judged).toMatchObject({ scorer: 'llm:chatgpt-4o-mini', judge_error: null, remi: judgement });

    // The key is nowhere in what the routes show.
    const activity = await fetch(`${http.baseUrl}/api/v1/kb/${kb}/activity/chat/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [owner.header]: owner.value },
      body: JSON.stringify({ year_month: month, filters: {} }),
    });
    expect(activity.status).toBe(200);
    const records = await activity.text();
    expect(records).toContain(QUESTION);
    for (const shown of [JSON.stringify(offline), JSON.stringify(judged), records]) expect(shown).not.toContain(SECRET);
  } finally {
    await llm.close();
  }
}
