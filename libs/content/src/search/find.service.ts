import { Injectable } from '@nestjs/common';
import { FIND_DEFAULT_FEATURES, type FindRequest, type FindResponse } from '@kb/contracts';
import { QueryRephraser } from '../ask/query-rephraser.service';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { FindMerge } from './find/find-merge';
import { FindPlanner, type FindPlan, type RetrievalRequest } from './find/find-plan';
import { FindResults, type FindOutcome } from './find/find-results';
import { FindRetrieval } from './find/find-retrieval';
import { SearchAuditService } from './find/search-audit.service';
import { SearchRepository } from './find/search.repository';

/**
 * `/find`, a straight pipeline: planning (FindPlanner) → retrieval (FindRetrieval) → fusion,
 * reranking and top_k (FindMerge) → rendering (FindResults), then the activity event. /ask runs
 * the same steps (`run` is retrieval and merging) around its answer.
 */
@Injectable()
export class FindService {
  constructor(
    private readonly planner: FindPlanner,
    private readonly retrieval: FindRetrieval,
    private readonly merger: FindMerge,
    private readonly results: FindResults,
    private readonly repository: SearchRepository,
    private readonly auditor: SearchAuditService,
    private readonly configs: KbConfigsService,
    private readonly rephraser: QueryRephraser,
  ) {}

  /** /find: the KnowledgeboxFindResults shape of API-MAP 2.2. */
  async find(request: RetrievalRequest<FindRequest>): Promise<FindResponse> {
    const started = Date.now();
    // A named search configuration is the base of the body (docs/kb-configuration.md).
    const req = { ...request, body: await this.configs.applySearch(request.kbid, request.body, 'find') };
    const plan = await this.planner.plan(req, { defaultFeatures: FIND_DEFAULT_FEATURES, rephrase: true });
    await this.rephraser.rephrasePlan(plan, { generativeModel: req.body.generative_model });
    const outcome = await this.run(plan);
    if (plan.features.includes('relations')) outcome.relations = await this.repository.relations(plan);
    plan.signal?.throwIfAborted();
    const body = await this.results.render(outcome);
    this.auditor.audit(
      req,
      'search',
      started,
      {
        query: plan.originalQuery ?? plan.query,
        ...(plan.originalQuery !== undefined ? { rephrased_question: plan.query } : {}),
        features: plan.features,
        resources_count: Object.keys(body.resources).length,
        filters: req.body.filter_expression ?? req.body.filters ?? null,
      },
      plan.auditMetadata,
    );
    return body;
  }

  /** Runs the plan: retrievers (in parallel), fusion, reranking, duplicate collapsing, top_k. */
  async run(plan: FindPlan): Promise<FindOutcome> {
    const t0 = Date.now();
    const timings: Record<string, number> = {};
    const retrieved = await this.retrieval.retrieve(plan, timings, t0);
    plan.signal?.throwIfAborted();
    const { paragraphs, resources } = await this.merger.merge(plan, retrieved, { resources: true });
    timings['total_ms'] = Date.now() - t0;
    return {
      plan,
      paragraphs,
      resources,
      minScore: { semantic: retrieved.minSemantic, bm25: plan.minBm25 },
      terms: retrieved.terms,
      timings,
    };
  }
}
