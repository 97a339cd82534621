import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DomainError, UnderstandingSubjects, type RerankRequest, type RerankResponse } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';
import { OnnxCrossEncoder } from './onnx.cross-encoder';

/**
 * The cross-encoder reranker (/find's `reranker: cross-encoder`, docs/search.md): scores a query's
 * paragraphs with the model in RERANKER_MODEL_DIR, loaded once on first use. Without that folder
 * the request is refused as invalid (422, the caller chose a reranker this deployment has not);
 * a folder that cannot be used or a failed inference is a 503.
 */
@Injectable()
export class RerankService implements OnModuleInit, OnApplicationShutdown {
  private readonly encoder?: OnnxCrossEncoder;

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(UNDERSTANDING_OPTIONS) options: UnderstandingOptions,
  ) {
    if (options.rerankerModelDir) this.encoder = new OnnxCrossEncoder({ folder: options.rerankerModelDir });
  }

  async onModuleInit(): Promise<void> {
    await this.bus.handle(UnderstandingSubjects.rerank, (req) => this.rerank(req));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.encoder?.close();
  }

  async rerank(req: RerankRequest): Promise<RerankResponse> {
    if (!this.encoder) {
      throw DomainError.validation([
        {
          loc: ['body', 'reranker'],
          msg: 'The cross-encoder reranker is not configured on this deployment (its operator sets RERANKER_MODEL_DIR); use predict or noop',
          type: 'value_error',
        },
      ]);
    }
    return { model: this.encoder.model, scores: await this.encoder.score(req.query, req.texts) };
  }
}
