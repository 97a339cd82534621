import type { AskPrequeryRequest } from '@kb/contracts';
import type { FindService } from '../search/find.service';
import type { FindPlan, FindPlanner } from '../search/find/find-plan';
import type { FindOutcome } from '../search/find/find-results';
import type { Generator } from './generation';
import { PREQUERY_REPHRASE_CONCURRENCY, runPrequeries } from './prequeries';
import type { QueryRephraser } from './query-rephraser.service';
import type { Prequeries } from './rag-strategies';

const generator = (model: string) => ({ model }) as unknown as Generator;

/** Planner, finder and rephraser fakes that record what they were asked; rephrasing holds until released. */
function harness() {
  let running = 0;
  const seen = { maxRunning: 0, rephrased: [] as { query: string; model: string }[], ran: [] as string[] };
  const planner = {
    plan: async (req: { body: AskPrequeryRequest }) =>
      ({ kbid: 'kb', query: req.body.query ?? '', rephrase: req.body.rephrase ? {} : undefined }) as unknown as FindPlan,
  } as unknown as FindPlanner;
  const finder = {
    run: async (plan: FindPlan) => (seen.ran.push(plan.query), { plan }) as unknown as FindOutcome,
  } as unknown as FindService;
  const rephraser = {
    generator: (_config: unknown, model: string) => generator(model),
    rephrasePlan: async (plan: FindPlan, o: { generator: Generator }) => {
      running++;
      seen.maxRunning = Math.max(seen.maxRunning, running);
      await new Promise((r) => setTimeout(r, 5));
      seen.rephrased.push({ query: plan.query, model: o.generator.model });
      plan.originalQuery = plan.query;
      plan.query = `${plan.query}!`;
      running--;
    },
  } as unknown as QueryRephraser;
  return { deps: { planner, finder, rephraser }, seen };
}

const strategy = (requests: AskPrequeryRequest[]): Prequeries => ({
  name: 'prequeries',
  mainQueryWeight: 1,
  queries: requests.map((request, j) => ({ id: `prequery_${j}`, request, weight: 1, prefilter: false })),
});

describe('runPrequeries', () => {
  it('rephrases only the prequeries that ask it, a bounded number of provider calls at a time, then runs each', async () => {
    const { deps, seen } = harness();
    const requests = Array.from({ length: 15 }, (_, j) => ({ query: `q${j}`, rephrase: j !== 3 }));
    const out = await runPrequeries(
      deps,
      strategy(requests),
      { kbid: 'kb', body: {} },
      { generator: generator('main'), config: {}, history: [] },
    );
    expect(seen.rephrased).toHaveLength(14);
    expect(seen.maxRunning).toBe(PREQUERY_REPHRASE_CONCURRENCY);
    expect(seen.ran).toEqual(requests.map((r, j) => (j === 3 ? r.query : `${r.query}!`)));
    expect(Object.keys(out)).toEqual(requests.map((_, j) => `prequery_${j}`));
  });

  it("uses a prequery's own generative_model, else the /ask's generator", async () => {
    const { deps, seen } = harness();
    await runPrequeries(
      deps,
      strategy([
        { query: 'a', rephrase: true, generative_model: 'claude-3-5-haiku' },
        { query: 'b', rephrase: true },
      ]),
      { kbid: 'kb', body: {} },
      { generator: generator('main'), config: {}, history: [] },
    );
    expect(seen.rephrased.map((r) => [r.query, r.model]).sort()).toEqual([
      ['a', 'claude-3-5-haiku'],
      ['b', 'main'],
    ]);
  });
});
