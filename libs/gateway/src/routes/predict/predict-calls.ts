import {
  ContentSubjects,
  DomainError,
  ErrorCodes,
  PREDICT_GET_ENDPOINTS,
  PREDICT_LIMITS,
  PREDICT_POST_ENDPOINTS,
  PredictChatBody,
  PredictQueryBody,
  PredictRemiBody,
  PredictRephraseBody,
  PredictRerankBody,
  PredictSentencesBody,
  PredictSummarizeBody,
  PredictSummarizeResource,
  PredictTextQuery,
  ReportingSubjects,
  UnderstandingSubjects,
  validatePayload,
  type BusContext,
  type PredictEmbedRequest,
  type PredictEmbedResponse,
  type PredictGenerateItem,
  type PredictGenerateRequest,
  type PredictQueryResponse,
  type PredictSentenceResponse,
  type PredictSentencesResponse,
  type PredictSummarizeResponse,
  type PredictTokensResponse,
} from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { TokenMeter } from './predict-usage';

/** What a call carries across the bus: the request's context and its cancellation; and what adds up its generations' tokens. */
export type CallOptions = { context: BusContext; signal: AbortSignal; meter?: TokenMeter };

/** The context budget /query reports (`max_context`): /ask's default context budget, in tokens. */
const MAX_CONTEXT_TOKENS = 12_000;

const seconds = (since: number) => Math.round(performance.now() - since) / 1000;

/** A path's `{endpoint}` that this method does not serve: 422 like the reference's enum check. */
export function unknownEndpoint(method: 'GET' | 'POST', endpoint: string): DomainError {
  const allowed = method === 'GET' ? PREDICT_GET_ENDPOINTS : PREDICT_POST_ENDPOINTS;
  return DomainError.validation([
    {
      loc: ['path', 'endpoint'],
      msg: `Unknown endpoint ${endpoint.slice(0, 64)}: input should be ${allowed.map((e) => `'${e}'`).join(', ')} (with ${method})`,
      type: 'enum',
    },
  ]);
}

/**
 * Generation failures as HTTP answers: a configuration the KB cannot use is 422, a provider that
 * failed 503 (429 when it limited us, 504 when it timed out). Messages are the generators' own
 * (status and kind, never the provider's body).
 */
export function generationFailure(err: unknown): unknown {
  if (!(err instanceof DomainError)) return err;
  if (err.code === 'GENERATIVE_CONFIG_INVALID')
    return new DomainError(ErrorCodes.VALIDATION_FAILED, err.message, {
      detail: [{ loc: ['kb', 'generative_model'], msg: err.message, type: 'value_error' }],
    });
  if (err.code === 'GENERATION_FAILED' || err.code === 'EMBEDDING_FAILED') {
    const kind = err.details?.['kind'];
    if (kind === 'rate_limited') return new DomainError(ErrorCodes.RATE_LIMITED, `The model provider is rate limiting: ${err.message}`, {});
    if (kind === 'timeout') return new DomainError(ErrorCodes.BUS_TIMEOUT, `The model provider did not answer in time: ${err.message}`);
    return new DomainError(ErrorCodes.SERVICE_UNAVAILABLE, `The model provider failed: ${err.message}`);
  }
  return err;
}

/**
 * The predict API's endpoints over the services (docs/predict.md), for a KB (its configured
 * models) or without one (the built-in models, understanding-API keys). Bodies and query strings
 * are checked here, each by its endpoint's DTO, before any model is called.
 */
export class PredictCalls {
  constructor(private readonly bus: MessageBus) {}

  async get(kbid: string | undefined, endpoint: string, query: unknown, o: CallOptions): Promise<unknown> {
    if (!(PREDICT_GET_ENDPOINTS as readonly string[]).includes(endpoint)) throw unknownEndpoint('GET', endpoint);
    const q = validatePayload(PredictTextQuery, query ?? {}, { loc: ['query'] });
    if (endpoint === 'sentence') return this.sentence(kbid, q.text, q.model ?? q.semantic_model, o);
    if (endpoint === 'tokens') return this.tokens(q.text, o);
    return this.query(kbid, q, o);
  }

  /** POST endpoints answering JSON (chat streams: see the controller). */
  async post(kbid: string | undefined, endpoint: string, body: unknown, o: CallOptions): Promise<unknown> {
    const input = body ?? {};
    switch (endpoint) {
      case 'sentences': {
        const b = validatePayload(PredictSentencesBody, input, { loc: ['body'] });
        const started = performance.now();
        const res = await this.embed({ kbid, texts: b.texts, vectorset: b.model, input: 'passage' }, o);
        return { data: res.vectors, model: res.model, time: seconds(started) } satisfies PredictSentencesResponse;
      }
      case 'query':
        return this.query(kbid, validatePayload(PredictQueryBody, input, { loc: ['body'] }), o);
      case 'summarize':
        return this.summarize(kbid, input, o);
      case 'rephrase': {
        const b = validatePayload(PredictRephraseBody, input, { loc: ['body'] });
        const history = [...(b.chat_history ?? []), ...(b.context ?? [])];
        const context = (b.user_context ?? []).map((text, i) => ({ key: `user_context/${i}`, text }));
        const out = await this.generateText(
          { kbid, task: 'rephrase', question: b.question, context, chat_history: history, generative_model: b.generative_model },
          o,
        );
        return out.text.trim() || b.question;
      }
      case 'rerank': {
        const b = validatePayload(PredictRerankBody, input, { loc: ['body'] });
        return this.bus.request(ContentSubjects.predictRerank, { question: b.question, context: b.context }, o);
      }
      case 'remi': {
        const b = validatePayload(PredictRemiBody, input, { loc: ['body'] });
        return this.bus.request(ReportingSubjects.predictRemi, { kbid, question: b.question, answer: b.answer, contexts: b.contexts }, o);
      }
      default:
        throw unknownEndpoint('POST', endpoint);
    }
  }

  /** The generation request of `POST predict/chat`, checked. */
  chatRequest(kbid: string | undefined, body: unknown): PredictGenerateRequest {
    const b = validatePayload(PredictChatBody, body ?? {}, { loc: ['body'] });
    const qc = b.query_context ?? [];
    const context = Array.isArray(qc)
      ? qc.map((text, i) => ({ key: String(i), text }))
      : Object.entries(qc).map(([key, text]) => ({ key, text }));
    const issues = contextIssues(qc);
    if (issues.length) throw DomainError.validation(issues);
    return {
      kbid,
      task: 'chat',
      question: b.question,
      context,
      chat_history: b.chat_history ?? [],
      system: b.system,
      user_prompt: b.user_prompt?.prompt,
      generative_model: b.generative_model,
      max_tokens: b.max_tokens,
      prefer_markdown: b.prefer_markdown,
      seed: b.seed,
    };
  }

  /** A generation's items, as they come. */
  generate(req: PredictGenerateRequest, o: CallOptions): AsyncIterable<PredictGenerateItem> {
    return this.bus.requestStream(ContentSubjects.predictGenerate, req, o);
  }

  /** A whole generation: its text and its closing item. */
  async generateText(
    req: PredictGenerateRequest,
    o: CallOptions,
  ): Promise<{ text: string; done?: Extract<PredictGenerateItem, { type: 'done' }> }> {
    let text = '';
    let done: Extract<PredictGenerateItem, { type: 'done' }> | undefined;
    try {
      for await (const item of this.generate(req, o)) {
        if (item.type === 'text') text += item.text;
        else if (item.type === 'done') done = item;
      }
    } catch (err) {
      throw generationFailure(err);
    }
    o.meter?.add(done);
    return { text, done };
  }

  /** The KB's embedder; a provider's failure is a 503 (or 429/504) with the embedder's own message. */
  private embed(req: PredictEmbedRequest, o: CallOptions): Promise<PredictEmbedResponse> {
    return this.bus.request(UnderstandingSubjects.predictEmbed, req, o).catch((err: unknown) => {
      throw generationFailure(err);
    });
  }

  private async sentence(
    kbid: string | undefined,
    text: string,
    model: string | undefined,
    o: CallOptions,
  ): Promise<PredictSentenceResponse> {
    const started = performance.now();
    const res = await this.embed({ kbid, texts: [text], vectorset: model, input: 'query' }, o);
    return { data: res.vectors[0] ?? [], time: seconds(started) };
  }

  private async tokens(text: string, o: CallOptions): Promise<PredictTokensResponse> {
    const started = performance.now();
    const res = await this.bus.request(UnderstandingSubjects.predictTokens, { text }, o);
    return { tokens: res.tokens, time: seconds(started) };
  }

  private async query(kbid: string | undefined, q: PredictTextQuery, o: CallOptions): Promise<PredictQueryResponse> {
    const started = performance.now();
    const [embedded, tokens] = await Promise.all([
      this.embed({ kbid, texts: [q.text], vectorset: q.semantic_model ?? q.model, input: 'query' }, o),
      this.bus.request(UnderstandingSubjects.predictTokens, { text: q.text }, o),
    ]);
    const time = seconds(started);
    return {
      language: tokens.language,
      stop_words: [],
      semantic_threshold: embedded.threshold,
      semantic_thresholds: embedded.thresholds,
      visual_llm: false,
      max_context: MAX_CONTEXT_TOKENS,
      entities: { tokens: tokens.tokens, time },
      sentence: { data: embedded.vectors[0] ?? [], time },
      query: q.text,
    };
  }

  private async summarize(kbid: string | undefined, input: unknown, o: CallOptions): Promise<PredictSummarizeResponse> {
    const b = validatePayload(PredictSummarizeBody, input, { loc: ['body'] });
    const entries = Object.entries(b.resources);
    if (entries.length === 0 || entries.length > PREDICT_LIMITS.resources) {
      throw DomainError.validation([
        { loc: ['body', 'resources'], msg: `From 1 to ${PREDICT_LIMITS.resources} resources`, type: 'too_long' },
      ]);
    }
    const resources = entries.map(([rid, r]) => {
      const checked = validatePayload(PredictSummarizeResource, r, { loc: ['body', 'resources', rid] });
      return [rid, Object.values(checked.fields)] as const;
    });
    const maxTokens = b.summary_kind === 'extended' ? 400 : 150;
    const out: PredictSummarizeResponse = { resources: {}, summary: '' };
    for (const [rid, texts] of resources) {
      const context = texts.filter((t) => t.trim()).map((text, i) => ({ key: `${rid}/${i}`, text }));
      if (context.length === 0) {
        out.resources[rid] = { summary: '', tokens: 0 };
        continue;
      }
      const res = await this.generateText(
        { kbid, task: 'summarize', question: '', context, chat_history: [], generative_model: b.generative_model, max_tokens: maxTokens },
        o,
      );
      out.resources[rid] = { summary: res.text.trim(), tokens: res.done?.output_tokens ?? Math.ceil(res.text.length / 4) };
    }
    const summaries = Object.values(out.resources)
      .map((r) => r.summary)
      .filter((s) => s);
    if (summaries.length === 1) out.summary = summaries[0] as string;
    else if (summaries.length > 1) {
      const context = summaries.map((text, i) => ({ key: String(i), text }));
      out.summary = (
        await this.generateText(
          { kbid, task: 'summarize', question: '', context, chat_history: [], generative_model: b.generative_model, max_tokens: maxTokens },
          o,
        )
      ).text.trim();
    }
    return out;
  }
}

/** `query_context` is a list of strings or a map of strings: at most 200 pieces of at most 20 000 characters. */
function contextIssues(qc: unknown): { loc: (string | number)[]; msg: string; type: string }[] {
  const loc = ['body', 'query_context'];
  if (typeof qc !== 'object' || qc === null) return [{ loc, msg: 'Input should be a list or a dictionary of strings', type: 'type_error' }];
  const values = Array.isArray(qc) ? qc : Object.values(qc);
  if (values.length > PREDICT_LIMITS.contexts) return [{ loc, msg: `At most ${PREDICT_LIMITS.contexts} context pieces`, type: 'too_long' }];
  if (!Array.isArray(qc) && Object.keys(qc).some((k) => k.length > 256))
    return [{ loc, msg: 'Context ids are at most 256 characters', type: 'string_too_long' }];
  if (values.some((v) => typeof v !== 'string')) return [{ loc, msg: 'Context pieces must be strings', type: 'string_type' }];
  if (values.some((v) => (v as string).length > PREDICT_LIMITS.text))
    return [{ loc, msg: `Context pieces are at most ${PREDICT_LIMITS.text} characters`, type: 'string_too_long' }];
  return [];
}
