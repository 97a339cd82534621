import { Module, type DynamicModule } from '@nestjs/common';
import { KbTranscribersService } from './query/kb-transcribers.service';
import { ModelFilesPublisher } from './query/model-files.publisher';
import { WebhookWorkerService } from './webhooks/webhook-worker.service';
import { FieldProcessorService } from './pipeline/field-processor.service';
import { ProcessingWorkerService } from './pipeline/processing-worker.service';
import { QueryEmbeddingService } from './query/query-embedding.service';
import { KbEmbeddersService } from './query/kb-embedders.service';
import { PredictService } from './query/predict.service';
import { RerankService } from './query/rerank.service';
import { PdfPageImageService } from './query/pdf-page-image.service';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from './understanding.tokens';

/** Needs the application's BLOB_STORE (StorageModule): files are read from it, results written to it. */
@Module({})
export class UnderstandingModule {
  static forRoot(options: UnderstandingOptions): DynamicModule {
    return {
      module: UnderstandingModule,
      providers: [
        { provide: UNDERSTANDING_OPTIONS, useValue: options },
        FieldProcessorService,
        ProcessingWorkerService,
        QueryEmbeddingService,
        PredictService,
        RerankService,
        PdfPageImageService,
        KbEmbeddersService,
        KbTranscribersService,
        WebhookWorkerService,
        ModelFilesPublisher,
      ],
    };
  }
}
