import { ASK_DEFAULT_FEATURES } from '@kb/contracts';
import { Gate } from '@kb/platform/concurrency';
import type { FindService } from '../search/find.service';
import type { FindPlan, FindPlanner, RetrievalRequest } from '../search/find/find-plan';
import type { FindOutcome } from '../search/find/find-results';
import type { ChatTurn, Generator } from './generation';
import type { QueryRephraser } from './query-rephraser.service';
import type { KbConfig } from './query-rephraser.service';
import type { Prequeries } from './rag-strategies';

/**
 * Provider calls of one /ask's prequery rephrasings at once. The prequeries are at most 15 (the
 * strategy's bound), each rephrased once, each call under the generator's own timeout.
 */
export const PREQUERY_REPHRASE_CONCURRENCY = 4;

export interface PrequeryDeps {
  planner: FindPlanner;
  finder: FindService;
  rephraser: QueryRephraser;
}

/**
 * The `prequeries` strategy's retrievals (API-MAP 2.4): each prequery's FindRequest planned like
 * the main query (a bad one is a 422 at its place), the ones that ask `rephrase` rewritten with
 * the /ask's chat history — by their own `generative_model`, else the /ask's generator — a few
 * provider calls at a time, then each run through the /find pipeline.
 */
export async function runPrequeries(
  deps: PrequeryDeps,
  strategy: Prequeries,
  retrieval: RetrievalRequest,
  o: { generator: Generator; config: KbConfig; history: ChatTurn[] },
): Promise<Record<string, FindOutcome>> {
  const plans: [string, FindPlan][] = [];
  for (const q of strategy.queries) {
    const plan = await deps.planner.plan(
      { ...retrieval, body: q.request },
      { defaultFeatures: ASK_DEFAULT_FEATURES, rephrase: true, loc: ['body', 'rag_strategies', 'prequeries', q.id] },
    );
    plans.push([q.id, plan]);
  }
  // Every model is resolved before any provider is called: an unusable one refuses the request whole.
  const generators = new Map(
    strategy.queries.map((q) => [
      q.id,
      q.request.generative_model ? deps.rephraser.generator(o.config, q.request.generative_model) : o.generator,
    ]),
  );
  const gate = new Gate(PREQUERY_REPHRASE_CONCURRENCY);
  await Promise.all(
    plans
      .filter(([, plan]) => plan.rephrase)
      .map(([id, plan]) => gate.run(() => deps.rephraser.rephrasePlan(plan, { generator: generators.get(id), history: o.history }))),
  );
  const out: Record<string, FindOutcome> = {};
  for (const [id, plan] of plans) out[id] = await deps.finder.run(plan);
  return out;
}
