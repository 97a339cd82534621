import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  ASK_DEFAULT_FEATURES,
  DomainError,
  ErrorCodes,
  type AskEnvelope,
  type AskItem,
  type FeedbackEnvelope,
  type FindResponse,
} from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FindService } from '../search/find.service';
import { FindPlanner } from '../search/find/find-plan';
import { FindResults, type FindOutcome } from '../search/find/find-results';
import { SearchAuditService } from '../search/find/search-audit.service';
import { SearchRepository } from '../search/find/search.repository';
import { Issues, isObject } from '../search/query/issues';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { QueryRephraser } from './query-rephraser.service';
import {
  computeCitations,
  estimateTokens,
  footnoteCitations,
  GenerationError,
  trimContext,
  type GenerationEvent,
  type Generator,
  EXTRACTIVE_MODEL,
} from './generation';
import { askOptionsOf } from './ask-options';
import { type Graph } from './rag-strategies';
import { GraphStrategyService } from './graph/graph-strategy.service';
import { AskImages } from './ask-images';
import { runPrequeries } from './prequeries';
import { AskContextAssembler, augmentedItem, mergeRanked, type ContextItem } from './ask-context';

export const NOT_ENOUGH_CONTEXT_ANSWER = 'Not enough data to answer this.';

/** The model's structured answer as an object (some models wrap it in a ```json fence); undefined when it is not one. */
export function parseAnswerObject(text: string): Record<string, unknown> | undefined {
  const body = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    const v: unknown = JSON.parse(body);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const status = (code: string, name: string, details?: string): AskItem => ({
  type: 'status',
  code,
  status: name,
  ...(details ? { details } : {}),
});

/**
 * `/ask` (API-MAP 2.4): retrieval through the /find engine, context assembly by the RAG
 * strategies within a token budget, generation by the KB's (or the request's) model, then the
 * retrieval, status, augmented context, citations and metadata items. Citations are computed by
 * aligning answer sentences to the context the generator saw, so they can never name anything else.
 */
@Injectable()
export class AskService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly rephraser: QueryRephraser,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly finder: FindService,
    private readonly planner: FindPlanner,
    private readonly results: FindResults,
    private readonly repository: SearchRepository,
    private readonly auditor: SearchAuditService,
    private readonly configs: KbConfigsService,
    private readonly graphs: GraphStrategyService,
    private readonly images: AskImages,
    private readonly contexts: AskContextAssembler,
  ) {}

  /**
   * Validates everything first (a bad request fails before any item is produced), then streams.
   * `signal` aborts when the caller went away: retrieval stops at its next step and the provider
   * call is cancelled (its connection closed), so nobody pays for an answer nobody reads.
   */
  async *ask(request: AskEnvelope, signal?: AbortSignal): AsyncGenerator<AskItem> {
    const started = Date.now();
    const req = { ...request, body: await this.configs.applySearch(request.kbid, request.body, 'ask') }; // docs/kb-configuration.md
    const issues = new Issues();
    const query = req.body.query ?? '';
    const retrieval = { kbid: req.kbid, body: req.body, forced_groups: req.forced_groups, actor: req.actor, signal };
    const plan = await this.planner.plan(retrieval, { defaultFeatures: ASK_DEFAULT_FEATURES, rephrase: true });
    const o = askOptionsOf(req.body);
    // The generator is known before the request is accepted: what only a provider can do is refused with the rest.
    const config = await this.rephraser.kbConfig(req.kbid, signal);
    signal?.throwIfAborted();
    let generator: Generator | undefined;
    let configError: unknown;
    try {
      generator = this.rephraser.generator(config, o.generativeModel);
    } catch (err) {
      configError = err;
    }
    if (o.answerJsonSchema && generator && !generator.structuredAnswers) {
      issues.issue(
        'answer_json_schema',
        'Not supported by the built-in extractive model: structured answers need a generative provider (generative_model with user_keys)',
        'not_supported',
      );
    }
    const graph = o.strategies.find((s): s is Graph => s.name === 'graph_beta');
    if (graph?.ranking === 'generative' && generator?.model === EXTRACTIVE_MODEL) {
      issues.issue(
        ['rag_strategies', (req.body.rag_strategies ?? []).findIndex((s) => s.name === 'graph_beta'), 'relation_ranking'],
        'Not supported by the built-in extractive model: generative relation ranking needs a generative provider; use reranker',
        'not_supported',
      );
    }
    this.images.check(req.body, generator, issues);
    issues.throwIfAny();
    if (!generator) throw configError;
    if (req.rid || req.slug) {
      const rows = (await this.ds.query(
        `SELECT id::text AS id FROM content.resources WHERE kbid = $1 AND ${req.rid ? 'id::text = $2' : 'slug = $2'}`,
        [req.kbid, req.rid ?? req.slug],
      )) as { id: string }[];
      if (!rows[0]) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
      plan.where += ` AND p.rid = ${plan.params.add(rows[0].id)}::uuid`;
    }
    await this.rephraser.rephrasePlan(plan, { generator, history: o.chatHistory, prompt: o.rephrasePrompt });
    const userPrompts = isObject(config['user_prompts'])
      ? (config['user_prompts'][generator.model] as Record<string, unknown> | undefined)
      : undefined;
    const systemPrompt = o.prompt.system ?? (typeof userPrompts?.['system'] === 'string' ? userPrompts['system'] : undefined);
    const userPrompt = o.prompt.user ?? (typeof userPrompts?.['prompt'] === 'string' ? userPrompts['prompt'] : undefined);
    const preferMarkdown = o.preferMarkdown ?? config['prefer_markdown_generative_response'] === true;

    // Retrieval (with prequeries when asked), then the context the generator will see.
    const prequery = o.strategies.find((s) => s.name === 'prequeries');
    const prequeryResults: Record<string, FindOutcome> = {};
    if (prequery && prequery.name === 'prequeries') {
      Object.assign(
        prequeryResults,
        await runPrequeries({ planner: this.planner, finder: this.finder, rephraser: this.rephraser }, prequery, retrieval, {
          generator,
          config,
          history: o.chatHistory,
        }),
      );
      const prefilter = prequery.queries
        .filter((q) => q.prefilter)
        .flatMap((q) => prequeryResults[q.id]?.paragraphs.map((p) => p.rid) ?? []);
      if (prequery.queries.some((q) => q.prefilter)) plan.where += ` AND p.rid = ANY(${plan.params.add([...new Set(prefilter)])}::uuid[])`;
    }
    const outcome = await this.finder.run(plan);
    // The relations feature: the entities of the question with the resources and entities around them (API-MAP 2.4 `relations`).
    if (plan.features.includes('relations')) outcome.relations = await this.repository.relations(plan);
    // graph_beta: the knowledge graph's relations (or their paragraphs) join as one more prequery, `graph` (docs/ask.md).
    const graphOutcome = graph ? await this.graphs.run(plan, graph, plan.query, generator) : undefined;
    const joined = [
      ...(prequery && prequery.name === 'prequeries'
        ? prequery.queries.map((q) => ({ weight: q.weight, outcome: prequeryResults[q.id] }))
        : []),
      // Nothing found in the graph leaves the retrieval's own scores alone.
      ...(graph && graphOutcome?.paragraphs.length ? [{ weight: graph.weight, outcome: graphOutcome }] : []),
    ];
    const mainWeight = prequery && prequery.name === 'prequeries' ? prequery.mainQueryWeight : 1;
    const ranked = joined.length ? mergeRanked(outcome.paragraphs, mainWeight, joined) : outcome.paragraphs;
    const retrievalItem = async (): Promise<AskItem> => {
      const results = await this.results.render({ ...outcome, paragraphs: ranked });
      return {
        type: 'retrieval',
        results,
        best_matches: ranked.map((p) => ({ id: p.paragraph_id, score: p.score, score_type: p.scoreType })),
      };
    };
    const chatHistory = o.chatHistory;
    const extra: ContextItem[] = o.extraContext.map((text, i) => ({
      key: `extra_context/${i}`,
      text,
      rid: '',
      augmentation: 'extra_context',
    }));
    let context = [...extra, ...(await this.contexts.assemble(ranked, o.strategies))];
    context = trimContext(context, o.maxContextTokens) as ContextItem[];
    const rephrasedQuestion = plan.originalQuery !== undefined ? plan.query : null;
    const details = {
      question: query,
      rephrased_question: rephrasedQuestion,
      chat_history: chatHistory,
      model: generator.model,
      strategies: o.strategies.map((s) => s.name),
      rag_strategies: req.body.rag_strategies ?? [],
      learning_id: req.learning_id,
    };

    const requestedImages = generator.images ? this.images.requested(req.body) : [];
    if (ranked.length === 0 && extra.length === 0 && requestedImages.length === 0) {
      yield status('-3', 'no_retrieval_data');
      yield { type: 'answer', text: NOT_ENOUGH_CONTEXT_ANSWER };
      yield await retrievalItem();
      this.auditor.audit(
        retrieval,
        'chat',
        started,
        { ...details, answer: NOT_ENOUGH_CONTEXT_ANSWER, status: 'no_retrieval_data', retrieved_context: [] },
        plan.auditMetadata,
      );
      return;
    }
    if (!o.generateAnswer) {
      yield await retrievalItem();
      yield status('0', 'success');
      yield augmentedItem(context);
      return;
    }

    // Images only reach generators that read them; rag_images_strategies add none to the built-in model.
    const pageOf = (c: ContextItem) => ({ ...c, page: c.position?.page_number });
    const fromStrategies = generator.images ? await this.images.fromStrategies(req.kbid, req.body, context.map(pageOf), signal) : undefined;
    const conversation = o.strategies.find((s) => s.name === 'conversation');
    const attached =
      generator.images && conversation?.name === 'conversation' && conversation.attachmentsImages
        ? await this.images.fromConversation(req.kbid, context, signal)
        : [];
    const images = generator.images ? [...(fromStrategies?.images ?? []), ...attached, ...requestedImages] : [];
    const genStarted = Date.now();
    let firstChunk: number | undefined;
    let answer = '';
    // With answer_json_schema the answer is one JSON object, sent whole once complete (API-MAP 2.4: no chunks, no citations).
    let json = '';
    const structured = o.answerJsonSchema !== undefined;
    const showReasoning = o.reasoning?.display !== false;
    let meta: Extract<GenerationEvent, { type: 'metadata' }> | undefined;
    let failure: string | undefined;
    try {
      for await (const ev of generator.generate({
        question: query,
        context: context.map((c) => ({ key: c.key, text: c.text })),
        images,
        chatHistory,
        systemPrompt,
        userPrompt,
        maxAnswerTokens: o.maxAnswerTokens,
        preferMarkdown,
        citations: structured ? 'none' : o.citations,
        seed: o.seed,
        signal,
        answerJsonSchema: o.answerJsonSchema,
        reasoning: o.reasoning ? { effort: o.reasoning.effort, budgetTokens: o.reasoning.budgetTokens } : undefined,
      })) {
        if (ev.type === 'text') {
          firstChunk ??= Date.now();
          answer += ev.text;
          if (!structured) yield { type: 'answer', text: ev.text };
        } else if (ev.type === 'json') {
          firstChunk ??= Date.now();
          json += ev.text;
        } else if (ev.type === 'reasoning') {
          if (showReasoning) yield { type: 'reasoning', text: ev.text };
        } else meta = ev;
      }
      if (structured) {
        const object = parseAnswerObject(json || answer);
        if (!object) failure = "provider: the model's structured answer is not a JSON object";
        else {
          answer = JSON.stringify(object);
          yield { type: 'answer_json', object };
        }
      }
    } catch (err) {
      if (signal?.aborted) {
        // Nobody reads further items; the usage so far is still recorded.
        this.auditor.audit(
          retrieval,
          'chat',
          started,
          { ...details, answer, status: 'error', error: 'cancelled by the caller', retrieved_context: context.map((c) => c.key) },
          plan.auditMetadata,
        );
        return;
      }
      failure = err instanceof GenerationError ? `${err.kind}: ${err.message}` : (err as Error).message;
      if (!(err instanceof GenerationError)) this.logger.error({ err: failure, kbid: req.kbid }, 'ask generation failed');
    }
    if (failure) {
      yield await retrievalItem();
      yield status('-1', 'error', failure);
      this.auditor.audit(
        retrieval,
        'chat',
        started,
        { ...details, answer, status: 'error', error: failure, retrieved_context: context.map((c) => c.key) },
        plan.auditMetadata,
      );
      return;
    }
    const genTotal = (Date.now() - genStarted) / 1000;
    yield await retrievalItem();
    if (prequery || graphOutcome) {
      const results: Record<string, FindResponse> = {};
      for (const [id, po] of Object.entries(prequeryResults)) results[id] = await this.results.render(po);
      if (graphOutcome) results['graph'] = await this.results.render(graphOutcome);
      yield { type: 'prequeries', results };
    }
    const noContext = answer.trim() === '';
    yield noContext ? status('-2', 'no_context') : status('0', 'success');
    yield augmentedItem(context);
    const citable = context.filter((c) => !c.key.startsWith('extra_context/'));
    if (structured) {
      // No citations: the answer is an object, not text to align.
    } else if (o.citations === 'default') yield { type: 'citations', citations: computeCitations(answer, citable, o.citationThreshold) };
    else if (o.citations === 'llm_footnotes') {
      const footnotes = Object.fromEntries(citable.map((c, i) => [String(i + 1 + extra.length), c.key]));
      yield { type: 'footnote_citations', footnote_to_context: footnoteCitations(answer, footnotes) };
    }
    // The answer's tokens, and those of graph_beta's generative ranking (model calls made for this answer).
    const inputTokens =
      (meta?.inputTokens ?? estimateTokens(context.map((c) => c.text).join('\n') + query)) + (graphOutcome?.tokens.input ?? 0);
    const outputTokens = (meta?.outputTokens ?? estimateTokens(answer)) + (graphOutcome?.tokens.output ?? 0);
    yield {
      type: 'metadata',
      tokens: { input: inputTokens, output: outputTokens, input_nuclia: inputTokens, output_nuclia: outputTokens },
      timings: { generative_first_chunk: firstChunk ? (firstChunk - genStarted) / 1000 : null, generative_total: genTotal },
    };
    if (req.show_consumption) {
      const customer =
        generator.model !== 'extractive' && config['user_keys']
          ? { input: inputTokens, output: outputTokens, image: 0 }
          : { input: 0, output: 0, image: 0 };
      yield {
        type: 'consumption',
        normalized_tokens: { input: inputTokens, output: outputTokens, image: 0 },
        customer_key_tokens: customer,
      };
    }
    if (outcome.relations && !noContext) yield { type: 'relations', relations: outcome.relations };
    if (plan.debug) {
      yield {
        type: 'debug',
        metadata: {
          prompt_context: context.map((c) => c.text),
          predict_request: {
            model: generator.model,
            question: query,
            rephrased_question: rephrasedQuestion,
            citations: o.citations,
            images: images.map((i) => i.key),
            ...(fromStrategies?.skipped.length ? { skipped_images: fromStrategies.skipped } : {}),
          },
        },
        metrics: outcome.timings,
      };
    }
    this.auditor.audit(
      retrieval,
      'chat',
      started,
      {
        ...details,
        answer,
        status: noContext ? 'no_context' : 'success',
        retrieved_context: context.map((c) => ({ key: c.key, text: c.text.slice(0, 2000) })),
        time_to_first_char: firstChunk ? firstChunk - started : null,
        // A model's tokens (usage `ai_tokens_used`); the built-in extractive answer uses none.
        ...(generator.model !== 'extractive' ? { input_tokens: inputTokens, output_tokens: outputTokens } : {}),
      },
      plan.auditMetadata,
    );
  }

  /** `/feedback`: good/bad (+ comment) on an answer, recorded against its learning id for reporting. */
  async feedback(req: FeedbackEnvelope): Promise<Record<string, never>> {
    const { ident, good, feedback, text_block_id: block } = req.body;
    const task = req.body.task ?? 'CHAT';
    this.auditor.audit({ kbid: req.kbid, actor: req.actor }, 'chat', Date.now(), {
      feedback: { learning_id: ident, good, task, feedback: feedback ?? null, text_block_id: block ?? null },
      learning_id: ident,
    });
    return {};
  }
}
