import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AccountsSubjects, ContentSubjects, type FieldQuestionAnswers, type QuestionAnswersJob } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { createGenerator, EXTRACTIVE_MODEL, GenerationError, type Generator } from '../ask/generation';
import { ResourcesRepository } from '../resources/resources.repository';
import type { OutboxEntry } from '../outbox/outbox.service';

const CONFIG_TTL_MS = 60_000;
/** At most this much of a field's text goes to the model. */
const MAX_CONTEXT_CHARS = 12_000;
const MAX_PAIRS = 5;
/** Field types without prose to ask about: conversations, a list of keywords, a date. */
const NO_PAIRS = new Set(['conversation', 'keywordset', 'datetime']);

interface StoredParagraph {
  start: number;
  end: number;
  key: string;
}

/**
 * Question/answer pairs of processed fields (spec 2.3 `extracted.question_answers`), made by the
 * KB's generative model when it is a provider model (the built-in extractive one writes none).
 * A field's successful processing result schedules the job in its own transaction; the job reads
 * the stored paragraphs, asks the model for pairs tied to paragraph ids, and stores them unless a
 * newer write of the field came meanwhile. Provider outages are retried by the queue; a refusal
 * or an unusable answer leaves the field without pairs (logged), never in error: the pairs are an
 * extra, and the field's text, vectors and search do not depend on them.
 *
 * It runs in content because the generative providers (and their configuration from `user_keys`)
 * are served by content's generation layer for /ask; one implementation of them is enough.
 */
@Injectable()
export class QuestionAnswersService {
  private readonly configs = new Map<string, { value: Promise<Record<string, unknown>>; until: number }>();

  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly repo: ResourcesRepository,
  ) {}

  /** The job for a field just processed, when the KB has a generative provider (else nothing). */
  async jobFor(job: QuestionAnswersJob): Promise<OutboxEntry[]> {
    if (NO_PAIRS.has(job.field_type)) return [];
    const config = await this.config(job.kbid).catch(() => ({}) as Record<string, unknown>);
    const model = typeof config['generative_model'] === 'string' ? config['generative_model'] : '';
    if (!model || model === EXTRACTIVE_MODEL) return [];
    return [{ kind: 'queue', target: ContentSubjects.generateQuestionAnswers.subject, payload: { ...job } }];
  }

  async generate(job: QuestionAnswersJob): Promise<void> {
    const field = await this.repo.findField(job.rid, job.field_type, job.field_id);
    if (!field || field.seqid !== job.seqid || field.status !== 'PROCESSED' || !field.extracted) return;
    const extracted = field.extracted as {
      text?: { text?: string };
      metadata?: { metadata?: { paragraphs?: StoredParagraph[]; language?: string } };
    };
    const text = extracted.text?.text ?? '';
    const paragraphs = (extracted.metadata?.metadata?.paragraphs ?? []).filter((p) => p.end > p.start);
    if (!text.trim() || paragraphs.length === 0) return;
    const context: { key: string; text: string }[] = [];
    let size = 0;
    for (const p of paragraphs) {
      const t = text.slice(p.start, p.end).trim();
      if (!t || size + t.length > MAX_CONTEXT_CHARS) break;
      context.push({ key: p.key, text: t });
      size += t.length;
    }
    if (context.length === 0) return;
    let generator: Generator;
    try {
      const config = await this.config(job.kbid);
      generator = createGenerator({
        generative_model: config['generative_model'] as string | undefined,
        user_keys: (config['user_keys'] as Record<string, Record<string, unknown>> | null) ?? null,
      });
    } catch (err) {
      this.logger.warn(
        { kbid: job.kbid, err: (err as Error).message },
        'question/answer pairs skipped: the generative model configuration is unusable',
      );
      return;
    }
    let answer = '';
    try {
      for await (const e of generator.generate({
        question: QUESTION,
        context,
        chatHistory: [],
        systemPrompt: SYSTEM,
        citations: 'none',
        maxAnswerTokens: 1200,
      })) {
        if (e.type === 'text') answer += e.text;
      }
    } catch (err) {
      // Outages and rate limits are worth another attempt (the queue backs off); refusals are not.
      if (err instanceof GenerationError && ['timeout', 'rate_limited', 'provider'].includes(err.kind)) throw err;
      this.logger.warn({ kbid: job.kbid, rid: job.rid, err: (err as Error).message }, 'question/answer pairs skipped: the model refused');
      return;
    }
    const language = extracted.metadata?.metadata?.language ?? '';
    const pairs = parsePairs(
      answer,
      context.map((c) => c.key),
      language,
    );
    if (pairs === null) {
      this.logger.warn({ kbid: job.kbid, rid: job.rid }, 'question/answer pairs skipped: the model did not answer with the JSON asked for');
      return;
    }
    const value: FieldQuestionAnswers = { question_answers: { question_answer: pairs }, split_question_answers: {}, deleted_splits: [] };
    // Only onto the write they were made from: a newer write's processing replaces `extracted`.
    await this.ds.query(
      `UPDATE content.fields SET extracted = jsonb_set(extracted, '{question_answers}', $5::jsonb)
        WHERE rid = $1 AND field_type = $2 AND field_id = $3 AND seqid = $4 AND extracted IS NOT NULL`,
      [job.rid, job.field_type, job.field_id, job.seqid, JSON.stringify(value)],
    );
  }

  private config(kbid: string): Promise<Record<string, unknown>> {
    const hit = this.configs.get(kbid);
    if (hit && hit.until > Date.now()) return hit.value;
    const value = this.bus.request(AccountsSubjects.resolveKbConfig, { kb_id: kbid });
    this.configs.set(kbid, { value, until: Date.now() + CONFIG_TTL_MS });
    value.catch(() => this.configs.delete(kbid));
    return value;
  }
}

const SYSTEM = 'You write question and answer pairs for a knowledge base. Use only the numbered context passages.';
const QUESTION = `Write up to ${MAX_PAIRS} questions a reader could ask that these paragraphs answer, each with its answer. Answer with JSON only, in this shape: {"pairs": [{"question": "...", "answer": "...", "paragraphs": [<numbers of the passages the answer comes from>]}]}. Write in the language of the passages.`;

/**
 * The pairs of the model's answer (code fences and text around the JSON tolerated), or null when
 * there are none to read. Passages are cited by their 1-based number (or their paragraph id).
 */
export function parsePairs(
  answer: string,
  keys: string[],
  language: string,
): FieldQuestionAnswers['question_answers']['question_answer'] | null {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.slice(start, end + 1));
  } catch {
    return null;
  }
  const list = (parsed as { pairs?: unknown }).pairs;
  if (!Array.isArray(list)) return null;
  const out: FieldQuestionAnswers['question_answers']['question_answer'] = [];
  for (const item of list.slice(0, MAX_PAIRS)) {
    const q = (item as { question?: unknown }).question;
    const a = (item as { answer?: unknown }).answer;
    if (typeof q !== 'string' || typeof a !== 'string' || !q.trim() || !a.trim()) continue;
    const cited = Array.isArray((item as { paragraphs?: unknown }).paragraphs) ? (item as { paragraphs: unknown[] }).paragraphs : [];
    const ids = [
      ...new Set(
        cited
          .map((p) =>
            typeof p === 'number' && Number.isInteger(p) ? keys[p - 1] : typeof p === 'string' && keys.includes(p) ? p : undefined,
          )
          .filter((k): k is string => !!k),
      ),
    ];
    out.push({ question: { text: q.trim(), language, ids_paragraphs: ids }, answers: [{ text: a.trim(), language, ids_paragraphs: ids }] });
  }
  return out.length > 0 ? out : null;
}
