import type { Credential } from './support/http-client';
import { totalsOf, usageReaches, type UsageJourneyContext } from './usage-journey';

type Account = { blocking_state: string; blocked_features: string[] };

const hourStart = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString();

/**
 * The predict API metered and its self-hosted limits enforced (issue 19; docs/usage.md), in either
 * topology: a KB's predict calls counted for the KB; an understanding-API key's counted under its
 * account and key — predictions, self-hosted searches (a query's vector or query information) and
 * answers — each call once, refusals and the model list not at all; then a self-hosted search limit
 * reached refuses the key's search calls with 402 (its answers, and the KB's routes, go on), the
 * account shows it, and raising the limit serves them again.
 */
export async function predictUsageJourney(c: UsageJourneyContext): Promise<void> {
  const { http } = c;
  const from = hourStart(new Date());
  const client = await http.call<{ token: string; internal_id: string }>('POST', `/api/v1/account/${c.account}/nua_clients`, {
    credential: c.root,
    body: { contact: 'predict-usage@example.com' },
  });
  expect(client.status).toBe(201);
  const ua: NonNullable<Credential> = { header: 'X-SVC-UAKEY', value: `Bearer ${client.body.token}` };
  const call = (method: string, path: string, credential: Credential, body?: unknown) => http.call(method, path, { credential, body });

  // The KB's: two predictions.
  expect((await call('GET', `/api/v1/kb/${c.kb}/predict/sentence?text=storms`, c.manager)).status).toBe(200);
  const kbChat = await call('POST', `/api/v1/kb/${c.kb}/predict/chat`, c.manager, {
    question: 'What causes tides?',
    query_context: ['The moon causes tides.'],
  });
  expect(kbChat.status).toBe(200);

  // The key's: six predictions, two self-hosted searches, two self-hosted answers.
  expect((await call('GET', '/api/v1/predict/sentence?text=tides', ua)).status).toBe(200);
  expect((await call('POST', '/api/v1/predict/query', ua, { text: 'what causes tides' })).status).toBe(200);
  expect(
    (await call('POST', '/api/v1/predict/chat', ua, { question: 'What causes tides?', query_context: ['The moon causes tides.'] })).status,
  ).toBe(200);
  const completion = await call('POST', '/api/v1/predict/compat/chat/completions', ua, {
    model: 'any',
    messages: [
      { role: 'system', content: 'The moon causes ocean tides.' },
      { role: 'user', content: 'What causes tides?' },
    ],
  });
  expect(completion.status).toBe(200);
  // A batch of passages is a prediction, not a search.
  expect((await call('POST', '/api/v1/predict/compat/embeddings', ua, { input: ['one passage', 'another'] })).status).toBe(200);
  expect((await call('GET', '/api/v1/predict/tokens?text=Barcelona', ua)).status).toBe(200);
  // Not metered: the model list (no model runs), refusals.
  expect((await call('GET', '/api/v1/predict/compat/models', ua)).status).toBe(200);
  expect((await call('GET', '/api/v1/predict/no-such-endpoint?text=x', ua)).status).toBe(422);
  expect((await call('POST', '/api/v1/predict/chat', ua, { query_context: 'not a list' })).status).toBe(422);

  const keyCalls = { predictions_performed: 6, self_hosted_searches_performed: 2, self_hosted_answers_generated: 2 };
  const byKey = await usageReaches(c, keyCalls, { from, aggregation: 'day', nua_key_id: client.body.internal_id }, "the key's calls");
  expect(totalsOf(byKey)['searches_performed']).toBe(0);
  expect(totalsOf(byKey)['answers_generated']).toBe(0);
  await usageReaches(
    c,
    { predictions_performed: 2, self_hosted_searches_performed: 0, self_hosted_answers_generated: 0 },
    { from, aggregation: 'day', knowledgebox: c.kb },
    "the KB's calls",
  );
  const account = await usageReaches(c, { ...keyCalls, predictions_performed: 8 }, { from, aggregation: 'day' }, 'the account');
  expect(totalsOf(account)['ai_tokens_used']).toBeGreaterThanOrEqual(0);

  // A self-hosted search limit reached: the key's searches are refused, its answers and the KB's routes are not.
  const setLimits = (usage: Record<string, number>) =>
    http.call('PUT', `/api/v1/account/${c.account}/limits`, { credential: c.root, body: { usage } });
  expect((await setLimits({ monthly_limit_self_hosted_searches_performed: 2 })).status).toBe(200);
  // Calls admitted before the block reached the gateway are served and counted (docs/usage.md, the bounded overshoot).
  let admitted = 0;
  await http.eventually(
    async () => {
      const status = (await call('GET', '/api/v1/predict/sentence?text=tides', ua)).status;
      if (status === 200) admitted += 1;
      return status === 402 ? true : undefined;
    },
    30_000,
    'a self-hosted search refused',
  );
  const refused = await call('POST', '/api/v1/predict/compat/embeddings', ua, { input: 'one query' });
  expect(refused.status).toBe(402);
  expect(JSON.stringify(refused.body)).toContain('self-hosted searches');
  expect((await call('POST', '/api/v1/predict/query', ua, { text: 'tides' })).status).toBe(402);
  expect((await call('POST', '/api/v1/predict/compat/embeddings', ua, { input: ['a', 'b'] })).status).toBe(200);
  expect((await call('POST', '/api/v1/predict/chat', ua, { question: 'Tides?', query_context: ['The moon.'] })).status).toBe(200);
  expect((await call('GET', `/api/v1/kb/${c.kb}/predict/sentence?text=storms`, c.manager)).status).toBe(200);
  expect((await call('POST', `/api/v1/kb/${c.kb}/find`, c.manager, { query: 'storm' })).status).toBe(200);
  await http.eventually(
    async () => {
      const a = await http.call<Account>('GET', `/api/v1/account/${c.account}`, { credential: c.root });
      return a.body.blocking_state === 'quota' && a.body.blocked_features.includes('self_hosted_search') ? a.body : undefined;
    },
    30_000,
    'the account showing the self-hosted search block',
  );
  // Every admitted call counted, no refused one.
  await usageReaches(
    c,
    { self_hosted_searches_performed: 2 + admitted, predictions_performed: 6 + admitted + 2 },
    { from, aggregation: 'day', nua_key_id: client.body.internal_id },
    'the admitted calls counted, the refused not',
  );

  expect((await setLimits({ monthly_limit_self_hosted_searches_performed: -1 })).status).toBe(200);
  await http.eventually(
    async () => ((await call('GET', '/api/v1/predict/sentence?text=tides', ua)).status === 200 ? true : undefined),
    30_000,
    'self-hosted searches served again',
  );
  await http.eventually(
    async () => {
      const a = await http.call<Account>('GET', `/api/v1/account/${c.account}`, { credential: c.root });
      return a.body.blocking_state === 'unblocked' ? true : undefined;
    },
    30_000,
    'the account unblocked',
  );
}
