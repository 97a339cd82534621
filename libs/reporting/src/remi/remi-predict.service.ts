import { Inject, Injectable } from '@nestjs/common';
import {
  BUILTIN_SEMANTIC_MODEL,
  DomainError,
  UnderstandingSubjects,
  type PredictRemiRequest,
  type PredictRemiResponse,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { REPORTING_OPTIONS, type ReportingOptions } from '../reporting.tokens';
import { scoreRemi, type EmbedTexts } from './remi-scorer';

/** Characters of a text sent to the model (it reads the head of longer texts anyway). */
const EMBED_CHARS = 2000;

/**
 * The predict API's REMi (`POST predict/remi`, docs/predict.md): the offline scorer of stored
 * answers run on what the caller gives. As in the reference, answer relevance needs question and
 * answer, context relevance question and contexts, groundedness answer and contexts; what cannot
 * be computed is null. Groundedness is per answer sentence here (the scorer's unit), not per context.
 */
@Injectable()
export class RemiPredictService {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(REPORTING_OPTIONS) private readonly options: ReportingOptions,
  ) {}

  async evaluate(req: PredictRemiRequest): Promise<PredictRemiResponse> {
    const started = performance.now();
    const question = req.question ?? '';
    const answer = req.answer ?? '';
    const contexts = req.contexts ?? [];
    if (!question.trim() && !answer.trim() && contexts.length === 0) {
      throw DomainError.validation([
        { loc: ['body'], msg: 'At least one of question, answer or contexts must be provided', type: 'value_error' },
      ]);
    }
    const embed = this.options.remiSemantic && req.kbid ? this.embedder(req.kbid) : undefined;
    const scores = await scoreRemi({ question, answer, context: contexts.map((text, i) => ({ key: String(i), text })) }, embed);
    const hasQ = question.trim() !== '';
    const hasA = answer.trim() !== '';
    const hasC = contexts.length > 0;
    return {
      time: (performance.now() - started) / 1000,
      answer_relevance: hasQ && hasA ? scores.answer_relevance : null,
      context_relevance: hasQ && hasC ? scores.context_relevance : null,
      groundedness: hasA && hasC ? scores.groundedness : null,
    };
  }

  /** The built-in model's vectors for a KB that has it; lexical scores only when it has not or the call fails. */
  private embedder(kbid: string): EmbedTexts {
    return async (texts) => {
      try {
        const res = await Promise.all(
          texts.map((t) =>
            this.bus.request(UnderstandingSubjects.embedQuery, {
              kbid,
              text: t.slice(0, EMBED_CHARS) || ' ',
              vectorset: BUILTIN_SEMANTIC_MODEL,
            }),
          ),
        );
        return res.map((r) => r.vector);
      } catch {
        return null;
      }
    };
  }
}
