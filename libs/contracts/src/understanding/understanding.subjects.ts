import { queue, rpc } from '../common/bus';
import { FieldProcessedResult, ProcessFieldJob } from './processing.dto';
import {
  EmbedQueryRequest,
  PdfPageImageRequest,
  RerankRequest,
  type EmbedQueryResponse,
  type PdfPageImageResponse,
  type RerankResponse,
} from './query.dto';
import { PredictEmbedRequest, PredictTokensRequest, type PredictEmbedResponse, type PredictTokensResult } from '../content/predict.dto';
import { DeliverWebhookJob, WebhookAttemptDto } from './webhook.dto';

export const UnderstandingSubjects = {
  /** Work queue consumed by processing workers. */
  processField: queue<ProcessFieldJob>('understanding.field.process', 'PROCESSING', ProcessFieldJob),
  /** Results, consumed by content to store `extracted` and index. */
  fieldProcessed: queue<FieldProcessedResult>('understanding.field.processed', 'PROCESSED', FieldProcessedResult),
  /** Embeds a search query with the KB's semantic model (the predict/query step of /find and /ask). */
  embedQuery: rpc<EmbedQueryRequest, EmbedQueryResponse>('understanding.query.embed', EmbedQueryRequest),
  /**
   * Scores of paragraphs for a query with the cross-encoder reranker's model (/find's `reranker:
   * cross-encoder`), run where the models run; 422 when no model is configured (RERANKER_MODEL_DIR).
   */
  rerank: rpc<RerankRequest, RerankResponse>('understanding.query.rerank', RerankRequest),
  /** One page of a file field's stored PDF rendered as an image in the extraction sandbox (/ask's page_image). */
  pdfPageImage: rpc<PdfPageImageRequest, PdfPageImageResponse>('understanding.pdf-page.render', PdfPageImageRequest),
  /** The predict API's vectors: a batch of texts with a KB's semantic model (or the built-in one). */
  predictEmbed: rpc<PredictEmbedRequest, PredictEmbedResponse>('understanding.predict.embed', PredictEmbedRequest),
  /** The predict API's named entities and language of a text. */
  predictTokens: rpc<PredictTokensRequest, PredictTokensResult>('understanding.predict.tokens', PredictTokensRequest),
  /** Webhook calls of completed jobs, retried with backoff by the bus (docs/webhooks.md). */
  deliverWebhook: queue<DeliverWebhookJob>('understanding.webhook.deliver', 'PROCESSING', DeliverWebhookJob),
  /** The outcome of each webhook attempt, stored by content for the client to see. */
  webhookAttempted: queue<WebhookAttemptDto>('understanding.webhook.attempted', 'PROCESSED', WebhookAttemptDto),
} as const;
