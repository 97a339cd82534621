import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, DomainError, ErrorCodes, type AskEnvelope, type AskItem, type FeedbackEnvelope, type FindResponse } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FindService, PARAGRAPH_COLUMNS, type FindOutcome, type ParagraphRow, type RankedParagraph } from '../search/find.service';
import { REQUEST_LIMITS } from '../search/query/request-limits';
import { RequestReader, isObject } from '../search/query/request-reader';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import {
  computeCitations, createGenerator, estimateTokens, footnoteCitations, GenerationError, supportScore, trimContext,
  type ChatTurn, type CitationMode, type GenerationContext, type GenerationEvent,
} from './generation';
import { readRagStrategies, type RagStrategy } from './rag-strategies';

export const NOT_ENOUGH_CONTEXT_ANSWER = 'Not enough data to answer this.';
const ASK_FEATURES = ['keyword', 'semantic', 'relations'] as const;
/** Context budget when the request sets none (tokens): enough for top_k paragraphs of a typical KB. */
const DEFAULT_CONTEXT_TOKENS = 12_000;

interface ContextItem extends GenerationContext {
  rid: string;
  /** Why it is there: retrieved, or added by a strategy (API-MAP augmented_context). */
  augmentation?: string;
  parent?: string;
  position?: { start: number; end: number; index: number; page_number: number };
}

interface AskOptions {
  citations: CitationMode;
  citationThreshold: number;
  chatHistory: ChatTurn[];
  extraContext: string[];
  prompt: { system?: string; user?: string };
  generativeModel?: string;
  seed?: number;
  maxAnswerTokens?: number;
  maxContextTokens: number;
  preferMarkdown?: boolean;
  generateAnswer: boolean;
  strategies: RagStrategy[];
}

const status = (code: string, name: string, details?: string): AskItem => ({ type: 'status', code, status: name, ...(details ? { details } : {}) });

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
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly finder: FindService,
    private readonly configs: KbConfigsService,
  ) {}

  /**
   * Validates everything first (a bad request fails before any item is produced), then streams.
   * `signal` aborts when the caller went away: retrieval stops at its next step and the provider
   * call is cancelled (its connection closed), so nobody pays for an answer nobody reads.
   */
  async *ask(request: AskEnvelope, signal?: AbortSignal): AsyncGenerator<AskItem> {
    const started = Date.now();
    const req = { ...request, body: (await this.configs.applySearch(request.kbid, request.body, 'ask')) as AskEnvelope['body'] }; // docs/kb-configuration.md
    const r = new RequestReader(req.body);
    const query = r.string('query', '', { max: 20_000, required: true });
    if (r.has('query') && !query.trim()) r.issue('query', 'The question must not be empty', 'string_too_short');
    const retrieval = { kbid: req.kbid, body: req.body, forced_groups: req.forced_groups, actor: req.actor, signal };
    const plan = await this.finder.plan(retrieval, r, { defaultFeatures: ['semantic', 'keyword'], allowed: ASK_FEATURES });
    const o = this.readOptions(r);
    r.finish();
    if (req.rid || req.slug) {
      const rows = (await this.ds.query(`SELECT id::text AS id FROM content.resources WHERE kbid = $1 AND ${req.rid ? 'id::text = $2' : 'slug = $2'}`, [req.kbid, req.rid ?? req.slug])) as { id: string }[];
      if (!rows[0]) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
      plan.where += ` AND p.rid = ${plan.params.add(rows[0].id)}::uuid`;
    }
    const config = await this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: req.kbid }, { signal }).catch(() => ({}) as Record<string, unknown>);
    signal?.throwIfAborted();
    const generator = createGenerator({
      generative_model: o.generativeModel ?? (config['generative_model'] as string | undefined),
      user_keys: (config['user_keys'] as Record<string, Record<string, unknown>> | null | undefined) ?? null,
    });
    const userPrompts = isObject(config['user_prompts']) ? (config['user_prompts'][generator.model] as Record<string, unknown> | undefined) : undefined;
    const systemPrompt = o.prompt.system ?? (typeof userPrompts?.['system'] === 'string' ? userPrompts['system'] : undefined);
    const userPrompt = o.prompt.user ?? (typeof userPrompts?.['prompt'] === 'string' ? userPrompts['prompt'] : undefined);
    const preferMarkdown = o.preferMarkdown ?? config['prefer_markdown_generative_response'] === true;

    // Retrieval (with prequeries when asked), then the context the generator will see.
    const prequery = o.strategies.find((s) => s.name === 'prequeries');
    const prequeryResults: Record<string, FindOutcome> = {};
    if (prequery && prequery.name === 'prequeries') {
      for (const q of prequery.queries) {
        const pr = new RequestReader(q.request, ['body', 'rag_strategies', 'prequeries', q.id]);
        const pplan = await this.finder.plan({ ...retrieval, body: q.request }, pr, { defaultFeatures: ['semantic', 'keyword'], allowed: ASK_FEATURES });
        pr.finish();
        prequeryResults[q.id] = await this.finder.run(pplan);
      }
      const prefilter = prequery.queries.filter((q) => q.prefilter).flatMap((q) => prequeryResults[q.id]?.paragraphs.map((p) => p.rid) ?? []);
      if (prequery.queries.some((q) => q.prefilter)) plan.where += ` AND p.rid = ANY(${plan.params.add([...new Set(prefilter)])}::uuid[])`;
    }
    const outcome = await this.finder.run(plan);
    const ranked = prequery && prequery.name === 'prequeries' ? this.mergePrequeries(outcome.paragraphs, prequery, prequeryResults) : outcome.paragraphs;
    const retrievalItem = async (): Promise<AskItem> => {
      const results = await this.finder.findResults({ ...outcome, paragraphs: ranked });
      return { type: 'retrieval', results, best_matches: ranked.map((p) => ({ id: p.paragraph_id, score: p.score, score_type: p.scoreType })) };
    };
    const chatHistory = o.chatHistory;
    const extra: ContextItem[] = o.extraContext.map((text, i) => ({ key: `extra_context/${i}`, text, rid: '', augmentation: 'extra_context' }));
    let context = [...extra, ...(await this.assemble(ranked, o.strategies))];
    context = trimContext(context, o.maxContextTokens) as ContextItem[];
    const details = { question: query, rephrased_question: null, chat_history: chatHistory, model: generator.model, strategies: o.strategies.map((s) => s.name), rag_strategies: (req.body as Record<string, unknown>)['rag_strategies'] ?? [], learning_id: req.learning_id };

    if (ranked.length === 0 && extra.length === 0) {
      yield status('-3', 'no_retrieval_data');
      yield { type: 'answer', text: NOT_ENOUGH_CONTEXT_ANSWER };
      yield await retrievalItem();
      this.finder.audit(retrieval, 'chat', started, { ...details, answer: NOT_ENOUGH_CONTEXT_ANSWER, status: 'no_retrieval_data', retrieved_context: [] }, plan.auditMetadata);
      return;
    }
    if (!o.generateAnswer) {
      yield await retrievalItem();
      yield status('0', 'success');
      yield this.augmented(context);
      return;
    }

    const genStarted = Date.now();
    let firstChunk: number | undefined;
    let answer = '';
    let meta: Extract<GenerationEvent, { type: 'metadata' }> | undefined;
    try {
      for await (const ev of generator.generate({
        question: query, context: context.map((c) => ({ key: c.key, text: c.text })), chatHistory, systemPrompt, userPrompt,
        maxAnswerTokens: o.maxAnswerTokens, preferMarkdown, citations: o.citations, seed: o.seed, signal,
      })) {
        if (ev.type === 'text') {
          firstChunk ??= Date.now();
          answer += ev.text;
          yield { type: 'answer', text: ev.text };
        } else if (ev.type === 'reasoning') yield { type: 'reasoning', text: ev.text };
        else meta = ev;
      }
    } catch (err) {
      if (signal?.aborted) {
        // Nobody reads further items; the usage so far is still recorded.
        this.finder.audit(retrieval, 'chat', started, { ...details, answer, status: 'error', error: 'cancelled by the caller', retrieved_context: context.map((c) => c.key) }, plan.auditMetadata);
        return;
      }
      const message = err instanceof GenerationError ? `${err.kind}: ${err.message}` : (err as Error).message;
      if (!(err instanceof GenerationError)) this.logger.error({ err: message, kbid: req.kbid }, 'ask generation failed');
      yield await retrievalItem();
      yield status('-1', 'error', message);
      this.finder.audit(retrieval, 'chat', started, { ...details, answer, status: 'error', error: message, retrieved_context: context.map((c) => c.key) }, plan.auditMetadata);
      return;
    }
    const genTotal = (Date.now() - genStarted) / 1000;
    yield await retrievalItem();
    if (prequery) {
      const results: Record<string, FindResponse> = {};
      for (const [id, po] of Object.entries(prequeryResults)) results[id] = await this.finder.findResults(po);
      yield { type: 'prequeries', results };
    }
    const noContext = answer.trim() === '';
    yield noContext ? status('-2', 'no_context') : status('0', 'success');
    yield this.augmented(context);
    const citable = context.filter((c) => !c.key.startsWith('extra_context/'));
    if (o.citations === 'default') yield { type: 'citations', citations: computeCitations(answer, citable, o.citationThreshold) };
    else if (o.citations === 'llm_footnotes') {
      const footnotes = Object.fromEntries(citable.map((c, i) => [String(i + 1 + extra.length), c.key]));
      yield { type: 'footnote_citations', footnote_to_context: footnoteCitations(answer, footnotes) };
    }
    const inputTokens = meta?.inputTokens ?? estimateTokens(context.map((c) => c.text).join('\n') + query);
    const outputTokens = meta?.outputTokens ?? estimateTokens(answer);
    yield {
      type: 'metadata',
      tokens: { input: inputTokens, output: outputTokens, input_nuclia: inputTokens, output_nuclia: outputTokens },
      timings: { generative_first_chunk: firstChunk ? (firstChunk - genStarted) / 1000 : null, generative_total: genTotal },
    };
    if (req.show_consumption) {
      const customer = generator.model !== 'extractive' && config['user_keys'] ? { input: inputTokens, output: outputTokens, image: 0 } : { input: 0, output: 0, image: 0 };
      yield { type: 'consumption', normalized_tokens: { input: inputTokens, output: outputTokens, image: 0 }, customer_key_tokens: customer };
    }
    if (plan.debug) {
      yield { type: 'debug', metadata: { prompt_context: context.map((c) => c.text), predict_request: { model: generator.model, question: query, citations: o.citations } }, metrics: outcome.timings };
    }
    this.finder.audit(retrieval, 'chat', started, {
      ...details, answer, status: noContext ? 'no_context' : 'success', retrieved_context: context.map((c) => ({ key: c.key, text: c.text.slice(0, 2000) })),
      time_to_first_char: firstChunk ? firstChunk - started : null,
    }, plan.auditMetadata);
  }

  private readOptions(r: RequestReader): AskOptions {
    const citationsRaw = r.raw('citations');
    let citations: CitationMode = 'default';
    if (citationsRaw === false || citationsRaw === 'none') citations = 'none';
    else if (citationsRaw === 'llm_footnotes') citations = 'llm_footnotes';
    else if (citationsRaw !== undefined && citationsRaw !== null && citationsRaw !== true && citationsRaw !== 'default') {
      r.issue('citations', "Input should be true, false, 'none', 'default' or 'llm_footnotes'", 'enum');
    }
    const threshold = r.raw('citation_threshold');
    const citationThreshold = r.number('citation_threshold', threshold, { min: 0, max: 1 }) ?? 0.4;
    const history = r.has('chat_history') ? r.raw('chat_history') : r.raw('context');
    if (r.has('chat_history') && r.has('context')) r.issue('context', 'context is the old name of chat_history: send one of them', 'value_error');
    const chatHistory: ChatTurn[] = [];
    if (history !== undefined && history !== null) {
      const name = r.has('chat_history') ? 'chat_history' : 'context';
      if (!Array.isArray(history)) r.issue(name, 'Input should be a valid list', 'list_type');
      else if (history.length > REQUEST_LIMITS.chatTurns) r.issue(name, `List should have at most ${REQUEST_LIMITS.chatTurns} items`, 'too_long');
      else {
        history.forEach((t, i) => {
          if (!isObject(t) || (t['author'] !== 'USER' && t['author'] !== 'NUCLIA') || typeof t['text'] !== 'string') {
            r.issue([name, i], "Input should be {author: 'USER'|'NUCLIA', text}", 'model_type');
          } else if (t['text'].length > REQUEST_LIMITS.passageChars) {
            r.issue([name, i, 'text'], `String should have at most ${REQUEST_LIMITS.passageChars} characters`, 'string_too_long');
          } else chatHistory.push({ author: t['author'], text: t['text'] });
        });
      }
    }
    const relevance = r.number('chat_history_relevance_threshold', r.raw('chat_history_relevance_threshold'), { min: 0, max: 1 });
    const query = typeof r.body['query'] === 'string' ? r.body['query'] : '';
    const keptHistory = relevance === undefined ? chatHistory : chatHistory.filter((t) => supportScore(query, t.text) >= relevance || supportScore(t.text, query) >= relevance);
    const extraContext = r.stringList('extra_context', { max: REQUEST_LIMITS.passageChars }) ?? [];
    const prompt: AskOptions['prompt'] = {};
    const p = r.raw('prompt');
    if (typeof p === 'string') prompt.user = p;
    else if (isObject(p)) {
      for (const k of Object.keys(p)) {
        if (k !== 'system' && k !== 'user' && k !== 'rephrase') r.issue(['prompt', k], 'Extra inputs are not permitted', 'extra_forbidden');
        else if (p[k] !== null && p[k] !== undefined && typeof p[k] !== 'string') r.issue(['prompt', k], 'Input should be a valid string', 'string_type');
      }
      if (typeof p['system'] === 'string') prompt.system = p['system'];
      if (typeof p['user'] === 'string') prompt.user = p['user'];
      if (typeof p['rephrase'] === 'string') r.issue(['prompt', 'rephrase'], 'Not supported: query rephrasing is not available', 'not_supported');
    } else if (p !== undefined && p !== null) r.issue('prompt', 'Input should be a string or {system, user}', 'model_type');
    const generativeModel = r.optionalString('generative_model');
    const seedRaw = r.raw('generative_model_seed');
    const seed = seedRaw === undefined || seedRaw === null ? undefined : Number.isInteger(seedRaw) ? (seedRaw as number) : (r.issue('generative_model_seed', 'Input should be a valid integer', 'int_type'), undefined);
    let maxAnswerTokens: number | undefined;
    let maxContextTokens = DEFAULT_CONTEXT_TOKENS;
    const mt = r.raw('max_tokens');
    if (typeof mt === 'number') {
      if (!Number.isInteger(mt) || mt < 1) r.issue('max_tokens', 'Input should be a positive integer', 'int_type');
      else maxAnswerTokens = mt;
    } else if (isObject(mt)) {
      for (const k of Object.keys(mt)) if (k !== 'context' && k !== 'answer') r.issue(['max_tokens', k], 'Extra inputs are not permitted', 'extra_forbidden');
      const c = mt['context'];
      const a = mt['answer'];
      if (c !== undefined && c !== null) {
        if (!Number.isInteger(c) || (c as number) < 1) r.issue(['max_tokens', 'context'], 'Input should be a positive integer', 'int_type');
        else maxContextTokens = c as number;
      }
      if (a !== undefined && a !== null) {
        if (!Number.isInteger(a) || (a as number) < 1) r.issue(['max_tokens', 'answer'], 'Input should be a positive integer', 'int_type');
        else maxAnswerTokens = a as number;
      }
    } else if (mt !== undefined && mt !== null) r.issue('max_tokens', 'Input should be an integer or {context, answer}', 'model_type');
    const preferRaw = r.raw('prefer_markdown');
    if (preferRaw !== undefined && preferRaw !== null && typeof preferRaw !== 'boolean') r.issue('prefer_markdown', 'Input should be a valid boolean', 'bool_type');
    const generateAnswer = r.bool('generate_answer', true);
    const strategies = readRagStrategies(r);
    const empty = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
    r.unsupported('extra_context_images', 'images are not sent to generative models', empty);
    r.unsupported('rag_images_strategies', 'image strategies are not available', empty);
    r.unsupported('answer_json_schema', 'structured (JSON schema) answers are not available', (v) => v === undefined || v === null);
    r.unsupported('reasoning', 'reasoning output is not available', (v) => v === undefined || v === null || v === false);
    return {
      citations, citationThreshold, chatHistory: keptHistory, extraContext, prompt, generativeModel, seed, maxAnswerTokens, maxContextTokens,
      preferMarkdown: typeof preferRaw === 'boolean' ? preferRaw : undefined, generateAnswer, strategies,
    };
  }

  /** Prequery results join the main ones by weighted reciprocal rank (each list counts by its weight). */
  private mergePrequeries(main: RankedParagraph[], s: Extract<RagStrategy, { name: 'prequeries' }>, results: Record<string, FindOutcome>): RankedParagraph[] {
    const scored = new Map<string, { p: RankedParagraph; score: number }>();
    const add = (list: RankedParagraph[], weight: number) =>
      list.forEach((p, rank) => {
        const prev = scored.get(p.paragraph_id);
        const score = weight / (60 + rank);
        if (prev) prev.score += score;
        else scored.set(p.paragraph_id, { p, score });
      });
    add(main, s.mainQueryWeight);
    for (const q of s.queries) add(results[q.id]?.paragraphs ?? [], q.weight);
    return [...scored.values()].sort((a, b) => b.score - a.score).map((x, order) => ({ ...x.p, score: x.score, order }));
  }

  private async fieldParagraphs(rid: string, fields?: string[]): Promise<ParagraphRow[]> {
    const params: unknown[] = [rid];
    const cond = fields?.length ? ` AND field = ANY($2::text[])` : '';
    if (fields?.length) params.push(fields);
    return (await this.ds.query(
      `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE rid = $1${cond} ORDER BY (field = 'a/title') DESC, field, split, start_offset`,
      params,
    )) as ParagraphRow[];
  }

  /** The context in rank order, extended by the strategies (API-MAP 2.4 rag_strategies). */
  private async assemble(ranked: RankedParagraph[], strategies: RagStrategy[]): Promise<ContextItem[]> {
    const out: ContextItem[] = [];
    const seen = new Set<string>();
    const push = (p: ParagraphRow, augmentation?: string, parent?: string): void => {
      if (seen.has(p.paragraph_id)) return;
      seen.add(p.paragraph_id);
      out.push({ key: p.paragraph_id, text: p.text, rid: p.rid, augmentation, parent, position: { start: p.start_offset, end: p.end_offset, index: p.idx, page_number: p.page ?? 0 } });
    };
    const full = strategies.find((s) => s.name === 'full_resource');
    const neighbours = strategies.find((s) => s.name === 'neighbouring_paragraphs');
    const extension = strategies.find((s) => s.name === 'field_extension');
    const conversation = strategies.find((s) => s.name === 'conversation');
    const rids = [...new Set(ranked.map((p) => p.rid))];
    if (full && full.name === 'full_resource') {
      const take = full.count ?? rids.length;
      for (const rid of rids.slice(0, take)) {
        for (const p of await this.fieldParagraphs(rid)) if (!full.exclude.some((f) => p.field === f || p.field.endsWith(`/${f}`))) push(p, 'full_resource');
      }
      if (full.includeRemaining) for (const p of ranked) if (!rids.slice(0, take).includes(p.rid)) push(p);
    } else {
      for (const p of ranked) {
        if (neighbours && neighbours.name === 'neighbouring_paragraphs') {
          const around = (await this.ds.query(
            `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs WHERE rid = $1 AND field = $2 AND split = $3 AND idx BETWEEN $4 AND $5 ORDER BY idx`,
            [p.rid, p.field, p.split, p.idx - neighbours.before, p.idx + neighbours.after],
          )) as ParagraphRow[];
          for (const n of around) if (n.idx < p.idx) push(n, 'neighbouring_paragraphs', p.paragraph_id);
          push(p);
          for (const n of around) if (n.idx > p.idx) push(n, 'neighbouring_paragraphs', p.paragraph_id);
        } else push(p);
        if (conversation && conversation.name === 'conversation' && p.field.startsWith('c/')) {
          const messages = (await this.fieldParagraphs(p.rid, [p.field])).filter((m) => m.paragraph_id !== p.paragraph_id);
          const pick = conversation.full ? messages : messages.sort((a, b) => Math.abs(a.idx - p.idx) - Math.abs(b.idx - p.idx)).slice(0, conversation.maxMessages);
          for (const m of pick) push(m, 'conversation', p.paragraph_id);
        }
      }
      if (extension && extension.name === 'field_extension') {
        for (const rid of rids) for (const p of await this.fieldParagraphs(rid, extension.fields)) push(p, 'field_extension');
      }
    }
    const hierarchy = strategies.find((s) => s.name === 'hierarchy');
    const metadata = strategies.find((s) => s.name === 'metadata_extension');
    if (hierarchy || metadata) {
      const resources = (await this.ds.query(
        `SELECT id::text AS id, title, summary, origin, usermetadata, extra, search_tags FROM content.resources WHERE id = ANY($1::uuid[])`,
        [[...new Set(out.map((c) => c.rid).filter(Boolean))]],
      )) as { id: string; title: string; summary: string; origin: Record<string, unknown>; usermetadata: Record<string, unknown>; extra: Record<string, unknown>; search_tags: string[] }[];
      const byId = new Map(resources.map((x) => [x.id, x]));
      for (const c of out) {
        const res = byId.get(c.rid);
        if (!res) continue;
        const head: string[] = [];
        if (hierarchy) head.push(`${res.title}${res.summary ? `\n${res.summary}` : ''}`);
        if (metadata && metadata.name === 'metadata_extension') {
          for (const t of metadata.types) {
            if (t === 'origin' && Object.keys(res.origin ?? {}).length) head.push(`Resource origin: ${JSON.stringify(res.origin)}`);
            if (t === 'classification_labels') {
              const labels = res.search_tags.filter((x) => x.startsWith('/l/')).map((x) => x.slice(3));
              if (labels.length) head.push(`Resource labels: ${labels.join(', ')}`);
            }
            if (t === 'ners') {
              const ners = res.search_tags.filter((x) => x.startsWith('/e/')).map((x) => x.slice(3));
              if (ners.length) head.push(`Resource named entities: ${ners.join(', ')}`);
            }
            if (t === 'extra_metadata' && Object.keys(res.extra ?? {}).length) head.push(`Resource extra metadata: ${JSON.stringify(res.extra)}`);
          }
        }
        if (head.length) c.text = `${head.join('\n')}\n\n${c.text}`;
      }
    }
    return out;
  }

  private augmented(context: ContextItem[]): AskItem {
    const paragraphs: Record<string, unknown> = {};
    for (const c of context) {
      if (!c.augmentation) continue;
      paragraphs[c.key] = { id: c.key, text: c.text, position: c.position ?? null, parent: c.parent ?? null, augmentation_type: c.augmentation };
    }
    return { type: 'augmented_context', augmented: { paragraphs, fields: {} } };
  }

  /** `/feedback`: good/bad (+ comment) on an answer, recorded against its learning id for reporting. */
  async feedback(req: FeedbackEnvelope): Promise<Record<string, never>> {
    const r = new RequestReader(req.body);
    const ident = r.string('ident', '', { required: true, max: 200 });
    const good = r.raw('good');
    if (typeof good !== 'boolean') r.issue('good', 'Input should be a valid boolean', 'bool_type');
    const task = r.enumOf('task', ['CHAT', 'SEARCH', 'INTENT'] as const, 'CHAT');
    const feedback = r.optionalString('feedback');
    const block = r.optionalString('text_block_id');
    r.finish();
    this.finder.audit({ kbid: req.kbid, body: req.body, actor: req.actor }, 'chat', Date.now(), { feedback: { learning_id: ident, good, task, feedback: feedback ?? null, text_block_id: block ?? null }, learning_id: ident });
    return {};
  }
}

