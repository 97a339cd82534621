import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes, type SummarizeEnvelope, type SummarizeResponse, type SummaryKind } from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { collectAnswer, estimateTokens, EXTRACTIVE_MODEL, trimContext, type Generator } from './generation';
import { QueryRephraser } from './query-rephraser.service';
import { centralSentences, SUMMARY_SIZE } from './summarize';

/** Text of one resource read for summarising (characters): bounds the work a request can cause. */
const MAX_RESOURCE_CHARS = 200_000;
/** Context given to a provider for one resource (tokens). */
const PROVIDER_CONTEXT_TOKENS = 8_000;

const SUMMARY_SYSTEM_PROMPT =
  'You summarise documents faithfully. Use only the passages you are given; add no outside knowledge and no opinion. ' +
  'Write in the language of the passages.';
const INSTRUCTIONS: Record<SummaryKind, string> = {
  simple: 'Summarise the passages above in at most three sentences.',
  extended: 'Summarise the passages above in one or two paragraphs, keeping every important point.',
};

interface ResourceText {
  id: string;
  title: string;
  paragraphs: string[];
}

/**
 * `/summarize` (API-MAP 2.8): a summary of each named resource and one of them together, by the
 * request's (or the KB's) generative model, or extractive (the most central sentences) without one.
 */
@Injectable()
export class SummarizeService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly models: QueryRephraser,
  ) {}

  async summarize(req: SummarizeEnvelope, signal?: AbortSignal): Promise<SummarizeResponse> {
    const ids = [...new Set(req.body.resources ?? [])];
    const kind: SummaryKind = req.body.summary_kind ?? 'simple';
    const rows = (await this.ds.query(`SELECT id::text AS id, title FROM content.resources WHERE kbid = $1 AND id = ANY($2::uuid[])`, [
      req.kbid,
      ids,
    ])) as { id: string; title: string }[];
    const byId = new Map(rows.map((r) => [r.id.replace(/-/g, ''), r]));
    const missing = ids.find((id) => !byId.has(id.toLowerCase().replace(/-/g, '')));
    if (missing) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, `Resource not found: ${missing}`);
    const paragraphs = (await this.ds.query(
      `SELECT rid::text AS rid, text FROM content.search_paragraphs WHERE kbid = $1 AND rid = ANY($2::uuid[]) AND field <> 'a/title' ORDER BY rid, field, split, start_offset`,
      [req.kbid, rows.map((r) => r.id)],
    )) as { rid: string; text: string }[];
    const resources: ResourceText[] = rows.map((r) => {
      const texts: string[] = [];
      let chars = 0;
      for (const p of paragraphs) {
        if (p.rid !== r.id || chars >= MAX_RESOURCE_CHARS) continue;
        texts.push(p.text.slice(0, MAX_RESOURCE_CHARS - chars));
        chars += p.text.length;
      }
      return { id: r.id, title: r.title, paragraphs: texts };
    });
    // In the order the request named them.
    resources.sort(
      (a, b) =>
        ids.findIndex((id) => id.toLowerCase().replace(/-/g, '') === a.id.replace(/-/g, '')) -
        ids.findIndex((id) => id.toLowerCase().replace(/-/g, '') === b.id.replace(/-/g, '')),
    );
    signal?.throwIfAborted();

    const config = await this.models.kbConfig(req.kbid, signal);
    const generator = this.models.generator(config, req.body.generative_model);
    const usage = { input: 0, output: 0 };
    const summarise = async (title: string, texts: string[]): Promise<{ summary: string; tokens: number }> => {
      if (generator.model === EXTRACTIVE_MODEL) {
        const summary = centralSentences(texts, SUMMARY_SIZE[kind]);
        return { summary, tokens: estimateTokens(summary) };
      }
      return this.byModel(generator, title, texts, kind, req.body.user_prompt, usage, signal);
    };
    const out: SummarizeResponse = { resources: {}, summary: '', consumption: null };
    for (const r of resources) out.resources[r.id] = await summarise(r.title, r.paragraphs);
    const each = Object.values(out.resources)
      .map((s) => s.summary)
      .filter((s) => s);
    out.summary = each.length <= 1 ? (each[0] ?? '') : (await summarise('', each)).summary;
    if (generator.model !== EXTRACTIVE_MODEL) {
      const tokens = { input: usage.input, output: usage.output, image: 0 };
      out.consumption = { normalized_tokens: tokens, customer_key_tokens: tokens };
    }
    return out;
  }

  private async byModel(
    generator: Generator,
    title: string,
    texts: string[],
    kind: SummaryKind,
    userPrompt: string | undefined,
    usage: { input: number; output: number },
    signal?: AbortSignal,
  ): Promise<{ summary: string; tokens: number }> {
    if (!texts.length) return { summary: '', tokens: 0 };
    const context = trimContext(
      texts.map((text, i) => ({ key: String(i), text })),
      PROVIDER_CONTEXT_TOKENS,
    );
    const { answer, metadata } = await collectAnswer(
      generator.generate({
        question: userPrompt?.trim() || INSTRUCTIONS[kind],
        context,
        chatHistory: [],
        citations: 'none',
        signal,
        systemPrompt: SUMMARY_SYSTEM_PROMPT,
        userPrompt: `${title ? `Document: ${title}\n\n` : ''}Passages:\n\n{context}\n\n{question}`,
        maxAnswerTokens: kind === 'simple' ? 300 : 1_000,
      }),
    );
    const summary = answer.trim();
    usage.input += metadata?.inputTokens ?? estimateTokens(context.map((c) => c.text).join('\n'));
    usage.output += metadata?.outputTokens ?? estimateTokens(summary);
    return { summary, tokens: metadata?.outputTokens ?? estimateTokens(summary) };
  }
}
