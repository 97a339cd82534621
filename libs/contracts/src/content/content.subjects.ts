import { event, live, queue, rpc, stream } from '../common/bus';
import { KbNotificationEvent } from './kb-notification.event';
import { QuestionAnswersJob } from './question-answers.dto';
import { RemiJudgeRequest, type RemiJudgeResponse } from './remi-judge.dto';
import { KbSynonymsRef, SetKbSynonymsRequest, type KbSynonymsDto } from './synonyms.dto';
import { AuditBatchEvent, AuditRecordedEvent } from './audit.event';
import { AskEnvelope } from './search/ask.dto';
import { SummarizeEnvelope, type SummarizeResponse } from './search/summarize.dto';
import { RetrieveEnvelope, type RetrieveResponse } from './search/retrieve.dto';
import { HydrateEnvelope, type HydrateResponse } from './search/hydrate.dto';
import { AugmentEnvelope, type AugmentResponse } from './search/augment.dto';
import type { AskItem } from './search/ask-items.dto';
import { FindEnvelope, type FindResponse } from './search/find.dto';
import { SearchRequestEnvelope, SuggestEnvelope, type SearchResponse, type SuggestResponse } from './search/search.dto';
import { CatalogEnvelope, CatalogFacetsEnvelope, type CatalogFacetsResponse, type CatalogResponse } from './search/catalog.dto';
import {
  GraphNodesEnvelope,
  GraphPathsEnvelope,
  GraphRelationsEnvelope,
  type GraphNodesResponse,
  type GraphPathsResponse,
  type GraphRelationsResponse,
} from './search/graph.dto';
import { FeedbackEnvelope } from './search/feedback.dto';
import {
  CreateResourceRequest,
  DeleteResourceRequest,
  GetResourceRequest,
  KbContentRef,
  ListResourcesRequest,
  ModifyResourceRequest,
  ResourceRef,
} from './resource-requests.dto';
import {
  AppendMessagesRequest,
  DeleteFieldRequest,
  DeleteMessageRequest,
  GetFieldRequest,
  Md5Request,
  PutFieldRequest,
  RegisterUploadRequest,
  ReprocessRequest,
} from './field-requests.dto';
import { ReindexResourceRequest } from './reindex-resource.dto';
import {
  PredictGenerateRequest,
  PredictKbRef,
  PredictRerankRequest,
  type PredictGenerateItem,
  type PredictModelsDto,
  type PredictRerankResponse,
} from './predict.dto';
import {
  ProcessingRequestRef,
  ProcessingRequestsQuery,
  ProcessingStatusRequest,
  type ProcessingStatusPage,
  type ProcessingStatusRecord,
} from './processing-status.dto';
import { ProcessingPullRequest, type ProcessingPullResult } from './processing-pull.dto';
import { WebhookDeliveriesRequest, type WebhookDeliveriesDto } from '../understanding/webhook.dto';
import { ProcessingPushRequest, type ProcessingPushResponseDto } from './processing-push.dto';
import { ResourceReindexedEvent } from './resource-reindexed.event';
import { LabelSetRef, SetLabelSetRequest, type LabelSetDto, type LabelSetsDto } from './labelset.dto';
import type { KbCountersDto } from './kb-counters.dto';
import {
  CreateEntitiesGroupRequest,
  EntitiesGroupRef,
  UpdateEntitiesGroupRequest,
  type EntitiesGroupDto,
  type KnowledgeBoxEntitiesDto,
} from './entities-groups.dto';
import {
  AccountBackupRef,
  AccountBackupsRef,
  KbTransferRef,
  PeekKbArchiveRequest,
  StartBackupRequest,
  StartKbExportRequest,
  StartKbImportRequest,
  type BackupCreatedDto,
  type BackupDto,
  type StagedRestoreDto,
  type KbArchiveHeadDto,
  type KbExportCreatedDto,
  type KbExportFileDto,
  type KbImportCreatedDto,
  type KbTransferStatusDto,
} from './kb-transfer.dto';
import {
  CreateKvSchemaRequest,
  CreateStrategyRequest,
  KbSettingsRef,
  KvSchemaRef,
  ResolveStrategiesRequest,
  SearchConfigurationRef,
  SetSearchConfigurationRequest,
  StrategiesRef,
  StrategyRef,
  UpdateKvSchemaRequest,
  type ExtractStrategyDto,
  type KbKvSchemasDto,
  type KvSchemaDto,
  type ResolvedStrategies,
  type SearchConfigurationDto,
  type SplitStrategyDto,
} from './kb-config.dto';
import type { FieldRecord, ResourceCreatedDto, ResourceDto, ResourceListDto, SeqIdDto } from './resource.dto';

export const ContentSubjects = {
  createResource: rpc<CreateResourceRequest, ResourceCreatedDto>('content.resource.create', CreateResourceRequest),
  getResource: rpc<GetResourceRequest, ResourceDto>('content.resource.get', GetResourceRequest),
  resourceExists: rpc<ResourceRef, { exists: boolean; rid?: string }>('content.resource.exists', ResourceRef),
  listResources: rpc<ListResourcesRequest, ResourceListDto>('content.resource.list', ListResourcesRequest),
  modifyResource: rpc<ModifyResourceRequest, SeqIdDto>('content.resource.modify', ModifyResourceRequest),
  deleteResource: rpc<DeleteResourceRequest, Record<string, never>>('content.resource.delete', DeleteResourceRequest),
  putField: rpc<PutFieldRequest, SeqIdDto>('content.field.put', PutFieldRequest),
  getField: rpc<GetFieldRequest, FieldRecord>('content.field.get', GetFieldRequest),
  deleteField: rpc<DeleteFieldRequest, Record<string, never>>('content.field.delete', DeleteFieldRequest),
  appendMessages: rpc<AppendMessagesRequest, SeqIdDto>('content.conversation.append', AppendMessagesRequest),
  deleteMessage: rpc<DeleteMessageRequest, Record<string, never>>('content.conversation.delete-message', DeleteMessageRequest),
  reprocessResource: rpc<ReprocessRequest, SeqIdDto>('content.resource.reprocess', ReprocessRequest),
  registerUpload: rpc<RegisterUploadRequest, { uuid: string; seqid: number; field_id: string }>(
    'content.upload.register',
    RegisterUploadRequest,
  ),
  md5Exists: rpc<Md5Request, { exists: boolean }>('content.file.checksum-exists', Md5Request),
  listLabelSets: rpc<KbContentRef, LabelSetsDto>('content.labelset.list', KbContentRef),
  getLabelSet: rpc<LabelSetRef, LabelSetDto>('content.labelset.get', LabelSetRef),
  setLabelSet: rpc<SetLabelSetRequest, Record<string, never>>('content.labelset.set', SetLabelSetRequest),
  deleteLabelSet: rpc<LabelSetRef, Record<string, never>>('content.labelset.delete', LabelSetRef),
  /** Entities groups (API-MAP 3): users' custom groups merged with the entities processing found. */
  listEntitiesGroups: rpc<KbContentRef, KnowledgeBoxEntitiesDto>('content.entities-group.list', KbContentRef),
  getEntitiesGroup: rpc<EntitiesGroupRef, EntitiesGroupDto>('content.entities-group.get', EntitiesGroupRef),
  createEntitiesGroup: rpc<CreateEntitiesGroupRequest, Record<string, never>>('content.entities-group.create', CreateEntitiesGroupRequest),
  updateEntitiesGroup: rpc<UpdateEntitiesGroupRequest, Record<string, never>>('content.entities-group.update', UpdateEntitiesGroupRequest),
  deleteEntitiesGroup: rpc<EntitiesGroupRef, Record<string, never>>('content.entities-group.delete', EntitiesGroupRef),
  /** Hybrid retrieval (API-MAP 2.2): KnowledgeboxFindResults. */
  find: rpc<FindEnvelope, FindResponse>('content.search.find', FindEnvelope),
  /** Retrieval only (the reference's hidden `/retrieve`): paragraph ids with scores and metadata. */
  retrieve: rpc<RetrieveEnvelope, RetrieveResponse>('content.search.retrieve', RetrieveEnvelope),
  /** The text and metadata of given paragraph ids (the reference's hidden `/hydrate`). */
  hydrate: rpc<HydrateEnvelope, HydrateResponse>('content.search.hydrate', HydrateEnvelope),
  /** Given resources, fields and paragraphs augmented as RAG strategies do (the reference's hidden `/augment`). */
  augment: rpc<AugmentEnvelope, AugmentResponse>('content.search.augment', AugmentEnvelope),
  /** Separate result lists (API-MAP 2.3): KnowledgeboxSearchResults. */
  search: rpc<SearchRequestEnvelope, SearchResponse>('content.search.search', SearchRequestEnvelope),
  /** Paragraph and entity suggestions (API-MAP 2.5). */
  suggest: rpc<SuggestEnvelope, SuggestResponse>('content.search.suggest', SuggestEnvelope),
  /** Resource listing with filters and facets (API-MAP 2.6). */
  catalog: rpc<CatalogEnvelope, CatalogResponse>('content.search.catalog', CatalogEnvelope),
  catalogFacets: rpc<CatalogFacetsEnvelope, CatalogFacetsResponse>('content.search.catalog-facets', CatalogFacetsEnvelope),
  /** Knowledge-graph queries (API-MAP 2.8): `{paths}`, `{nodes}`, `{relations}`. */
  graphPaths: rpc<GraphPathsEnvelope, GraphPathsResponse>('content.search.graph', GraphPathsEnvelope),
  graphNodes: rpc<GraphNodesEnvelope, GraphNodesResponse>('content.search.graph-nodes', GraphNodesEnvelope),
  graphRelations: rpc<GraphRelationsEnvelope, GraphRelationsResponse>('content.search.graph-relations', GraphRelationsEnvelope),
  /** Retrieval-augmented answer, streamed item by item (API-MAP 2.4). */
  ask: stream<AskEnvelope, AskItem>('content.ask.stream', AskEnvelope),
  /** The predict API's generations (chat, summarize, rephrase) with the KB's generative model (docs/predict.md). */
  predictGenerate: stream<PredictGenerateRequest, PredictGenerateItem>('content.predict.generate', PredictGenerateRequest),
  /** The built-in lexical reranker's scores of context pieces for a question. */
  predictRerank: rpc<PredictRerankRequest, PredictRerankResponse>('content.predict.rerank', PredictRerankRequest),
  /** The generative and semantic models of a KB (or the built-in ones). */
  predictModels: rpc<PredictKbRef, PredictModelsDto>('content.predict.models', PredictKbRef),
  /** Good/bad feedback on an answer, by its learning id. */
  feedback: rpc<FeedbackEnvelope, Record<string, never>>('content.ask.feedback', FeedbackEnvelope),
  /** Summaries of chosen resources, each and together (API-MAP 2.8 `/summarize`). */
  summarize: rpc<SummarizeEnvelope, SummarizeResponse>('content.ask.summarize', SummarizeEnvelope),
  countResources: rpc<KbContentRef, { resources: number }>('content.kb.count', KbContentRef),
  /** `GET /kb/{kbid}/counters`: resources, fields, paragraphs, sentences and index size of a KB. */
  kbCounters: rpc<KbContentRef, KbCountersDto>('content.kb.counters', KbContentRef),
  reindexResource: rpc<ReindexResourceRequest, Record<string, never>>('content.resource.reindex', ReindexResourceRequest),
  /** Processing status records of a KB (spec 2.7), newest first. */
  processingStatus: rpc<ProcessingStatusRequest, ProcessingStatusPage>('content.processing.status', ProcessingStatusRequest),
  /** The understanding API's processed-data list and record, over the KBs of the client's account. */
  processingRequests: rpc<ProcessingRequestsQuery, ProcessingStatusPage>('content.processing.requests', ProcessingRequestsQuery),
  processingRequest: rpc<ProcessingRequestRef, ProcessingStatusRecord>('content.processing.request', ProcessingRequestRef),
  /** The understanding API's "Send Data To Process": writes the pushed fields into a resource of the KB and schedules their processing. */
  processingPush: rpc<ProcessingPushRequest, ProcessingPushResponseDto>('content.processing.push', ProcessingPushRequest),
  processingPull: rpc<ProcessingPullRequest, ProcessingPullResult>('content.processing.pull', ProcessingPullRequest),
  getSynonyms: rpc<KbSynonymsRef, KbSynonymsDto>('content.synonyms.get', KbSynonymsRef),
  setSynonyms: rpc<SetKbSynonymsRequest, Record<string, never>>('content.synonyms.set', SetKbSynonymsRequest),
  deleteSynonyms: rpc<KbSynonymsRef, Record<string, never>>('content.synonyms.delete', KbSynonymsRef),
  /** Saved search configurations (find/ask presets applied by `search_configuration`). */
  listSearchConfigurations: rpc<KbSettingsRef, Record<string, SearchConfigurationDto>>('content.search-configurations.list', KbSettingsRef),
  getSearchConfiguration: rpc<SearchConfigurationRef, SearchConfigurationDto>('content.search-configurations.get', SearchConfigurationRef),
  createSearchConfiguration: rpc<SetSearchConfigurationRequest, Record<string, never>>(
    'content.search-configurations.create',
    SetSearchConfigurationRequest,
  ),
  updateSearchConfiguration: rpc<SetSearchConfigurationRequest, Record<string, never>>(
    'content.search-configurations.update',
    SetSearchConfigurationRequest,
  ),
  deleteSearchConfiguration: rpc<SearchConfigurationRef, Record<string, never>>(
    'content.search-configurations.delete',
    SearchConfigurationRef,
  ),
  /** Key-value schemas. */
  listKvSchemas: rpc<KbSettingsRef, KbKvSchemasDto>('content.kv-schemas.list', KbSettingsRef),
  getKvSchema: rpc<KvSchemaRef, KvSchemaDto>('content.kv-schemas.get', KvSchemaRef),
  createKvSchema: rpc<CreateKvSchemaRequest, KvSchemaDto>('content.kv-schemas.create', CreateKvSchemaRequest),
  updateKvSchema: rpc<UpdateKvSchemaRequest, KvSchemaDto>('content.kv-schemas.update', UpdateKvSchemaRequest),
  deleteKvSchema: rpc<KvSchemaRef, Record<string, never>>('content.kv-schemas.delete', KvSchemaRef),
  /** Split and extract strategies (`kind`), applied by processing to the fields naming them. */
  listStrategies: rpc<StrategiesRef, Record<string, SplitStrategyDto | ExtractStrategyDto>>('content.strategies.list', StrategiesRef),
  getStrategy: rpc<StrategyRef, SplitStrategyDto | ExtractStrategyDto>('content.strategies.get', StrategyRef),
  createStrategy: rpc<CreateStrategyRequest, { id: string }>('content.strategies.create', CreateStrategyRequest),
  deleteStrategy: rpc<StrategyRef, Record<string, never>>('content.strategies.delete', StrategyRef),
  /** Internal: the strategies a processing job's field names, for the understanding workers. */
  resolveStrategies: rpc<ResolveStrategiesRequest, ResolvedStrategies>('content.strategies.resolve', ResolveStrategiesRequest),
  processingWebhooks: rpc<WebhookDeliveriesRequest, WebhookDeliveriesDto>('content.processing.webhooks', WebhookDeliveriesRequest),
  /** Question/answer pairs of a processed field, by the KB's generative model (when it has a provider). */
  generateQuestionAnswers: queue<QuestionAnswersJob>('content.field.question-answers', 'PROCESSED', QuestionAnswersJob),
  /** Internal: one `/ask` answer graded by the KB's generative model (the REMi LLM judge), for the reporting service. */
  remiJudge: rpc<RemiJudgeRequest, RemiJudgeResponse>('content.remi.judge', RemiJudgeRequest),

  /** Export and import of a KB (API-MAP 3, docs/export-format.md): jobs run in the background by content. */
  startKbExport: rpc<StartKbExportRequest, KbExportCreatedDto>('content.kb-export.start', StartKbExportRequest),
  kbExportStatus: rpc<KbTransferRef, KbTransferStatusDto>('content.kb-export.status', KbTransferRef),
  kbExportFile: rpc<KbTransferRef, KbExportFileDto>('content.kb-export.file', KbTransferRef),
  /** Reads the manifest and KB configuration of a staged archive (to create the KB it goes into). */
  peekKbArchive: rpc<PeekKbArchiveRequest, KbArchiveHeadDto>('content.kb-import.peek', PeekKbArchiveRequest),
  startKbImport: rpc<StartKbImportRequest, KbImportCreatedDto>('content.kb-import.start', StartKbImportRequest),
  kbImportStatus: rpc<KbTransferRef, KbTransferStatusDto>('content.kb-import.status', KbTransferRef),
  /** Account backups: an export of one KB kept for the account (it outlives the KB) and restored into a new KB. */
  startBackup: rpc<StartBackupRequest, BackupCreatedDto>('content.backup.start', StartBackupRequest),
  listBackups: rpc<AccountBackupsRef, BackupDto[]>('content.backup.list', AccountBackupsRef),
  deleteBackup: rpc<AccountBackupRef, Record<string, never>>('content.backup.delete', AccountBackupRef),
  stageRestore: rpc<AccountBackupRef, StagedRestoreDto>('content.backup.stage-restore', AccountBackupRef),

  auditRecorded: event<AuditRecordedEvent>('content.audit.recorded', 'AUDIT', AuditRecordedEvent),
  /** The events of requests (visited, search, suggest, chat), several to a message. */
  auditBatch: event<AuditBatchEvent>('content.audit.batch', 'AUDIT', AuditBatchEvent),
  /** A resource's index rows must be rebuilt from its stored extracted data (the search indexer subscribes). */
  resourceReindexed: event<ResourceReindexedEvent>('content.resource.reindexed', 'NOTIFICATIONS', ResourceReindexedEvent),
  /**
   * Live notifications of one KB (resource written, processed, indexed), published on
   * `content.kb-notification.emitted.<kbid>`: a gateway listens only to the KBs its readers follow.
   */
  kbNotification: live<KbNotificationEvent>('content.kb-notification.emitted', KbNotificationEvent),
} as const;
