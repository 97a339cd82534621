import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  DomainError,
  UnderstandingSubjects,
  type PredictEmbedRequest,
  type PredictEmbedResponse,
  type PredictTokensRequest,
  type PredictTokensResult,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { detectLanguage, extractEntities } from '../pipeline/analysis';
import { defaultEmbedderFactory } from '../pipeline/analysis/default-embedder';
import type { Embedder } from '../pipeline/analysis/embedder';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { KbEmbeddersService } from './kb-embedders.service';

/**
 * The understanding side of the predict API (docs/predict.md): vectors of texts with a KB's
 * semantic model (the same embedder that vectorised its paragraphs, so a caller's vectors compare
 * with the KB's), and the named entities processing would find in a text. Without a KB, the
 * built-in model answers.
 */
@Injectable()
export class PredictService implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly embedders: KbEmbeddersService,
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.bus.handle(UnderstandingSubjects.predictEmbed, (req) => this.embed(req));
    await this.bus.handle(UnderstandingSubjects.predictTokens, async (req) => this.tokens(req));
  }

  async embed(req: PredictEmbedRequest): Promise<PredictEmbedResponse> {
    const all: Embedder[] = req.kbid
      ? await this.embedders.all(req.kbid)
      : [await (this.options.embedderFactory ?? defaultEmbedderFactory)('')];
    // A KB's model is named by its configured id or by the model its provider reports (as /find's `vectorset`).
    const embedder = req.kbid
      ? await this.embedders.forVectorset(req.kbid, req.vectorset)
      : req.vectorset
        ? all.find((e) => e.model === req.vectorset)
        : all[0];
    if (!embedder) {
      throw DomainError.validation([
        {
          loc: ['query', 'model'],
          msg: `Unknown model ${req.vectorset}; the available ones are ${all.map((e) => e.model).join(', ')}`,
          type: 'value_error',
        },
      ]);
    }
    const vectors =
      req.input === 'query' ? await Promise.all(req.texts.map((t) => embedder.embedQuery(t))) : await embedder.embedPassages(req.texts);
    return {
      model: embedder.model,
      vectors,
      similarity: embedder.similarity,
      threshold: embedder.threshold,
      thresholds: Object.fromEntries(all.map((e) => [e.model, e.threshold])),
    };
  }

  tokens(req: PredictTokensRequest): PredictTokensResult {
    const language = detectLanguage(req.text) ?? 'en';
    const { entities } = extractEntities(req.text, language);
    return { language, tokens: entities.map((e) => ({ text: e.text, ner: e.label, start: e.start, end: e.end })) };
  }
}
