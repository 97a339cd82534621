import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AccountsSubjects, ContentSubjects, UnderstandingSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { CONTENT_OPTIONS, type ContentOptions } from './content.tokens';
import { KbCleanupService } from './kbs/kb-cleanup.service';
import { ProcessingResultsService, RESULTS_PER_TRANSACTION } from './processing/processing-results.service';
import { ProcessingStatusService } from './processing/processing-requests';
import { QuestionAnswersService } from './processing/question-answers.service';
import { VectorsetsService } from './processing/vectorsets.service';
import { SynonymsService } from './search/synonyms.service';
import { WebhookDeliveriesService } from './processing/webhook-deliveries.service';
import { ProcessingPullService } from './processing/processing-pull.service';
import { ProcessingPushService } from './processing/processing-push.service';
import { ResourceReaderService } from './resources/resource-reader.service';
import { ResourcesService } from './resources/resources.service';
import { FieldsService } from './resources/fields.service';
import { LabelSetsService } from './labelsets/labelsets.service';
import { EntitiesGroupsService } from './entities-groups/entities-groups.service';
import { FindService } from './search/find.service';
import { RetrieveService } from './search/retrieve.service';
import { HydrateService } from './search/hydrate.service';
import { AugmentService } from './search/augment.service';
import { CatalogService } from './search/catalog.service';
import { GraphService } from './search/graph.service';
import { SearchListsService } from './search/search-lists.service';
import { AskService } from './ask/ask.service';
import { PredictService } from './predict/predict.service';
import { SummarizeService } from './ask/summarize.service';
import { RemiJudgeService } from './ask/remi-judge.service';
import { SearchReindexService } from './resources/search-reindex.service';
import { KbTransfersService } from './transfer/kb-transfers.service';
import { KbBackupsService } from './transfer/kb-backups.service';

@Injectable()
export class ContentHandlers implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(CONTENT_OPTIONS) private readonly options: ContentOptions,
    private readonly writer: ResourcesService,
    private readonly reader: ResourceReaderService,
    private readonly results: ProcessingResultsService,
    private readonly cleanup: KbCleanupService,
    private readonly fields: FieldsService,
    private readonly labelsets: LabelSetsService,
    private readonly finder: FindService,
    private readonly retriever: RetrieveService,
    private readonly hydrator: HydrateService,
    private readonly augmenter: AugmentService,
    private readonly catalog: CatalogService,
    private readonly graph: GraphService,
    private readonly lists: SearchListsService,
    private readonly asker: AskService,
    private readonly predictor: PredictService,
    private readonly summarizer: SummarizeService,
    private readonly judge: RemiJudgeService,
    private readonly reindexer: SearchReindexService,
    private readonly processingStatus: ProcessingStatusService,
    private readonly processingPush: ProcessingPushService,
    private readonly processingPull: ProcessingPullService,
    private readonly webhookDeliveries: WebhookDeliveriesService,
    private readonly questionAnswers: QuestionAnswersService,
    private readonly vectorsets: VectorsetsService,
    private readonly synonyms: SynonymsService,
    private readonly entitiesGroups: EntitiesGroupsService,
    private readonly transfers: KbTransfersService,
    private readonly backups: KbBackupsService,
  ) {}

  async onModuleInit(): Promise<void> {
    const S = ContentSubjects;
    await Promise.all([
      this.bus.handle(S.createResource, (req) => this.writer.create(req)),
      this.bus.handle(S.modifyResource, (req) => this.writer.modify(req)),
      this.bus.handle(S.deleteResource, (req) => this.writer.delete(req)),
      this.bus.handle(S.reindexResource, (req) => this.writer.reindex(req)),
      this.bus.handle(S.processingStatus, (req) => this.processingStatus.list(req)),
      this.bus.handle(S.processingRequests, (req) =>
        this.processingStatus.query({
          kbids: req.kbids,
          cursor: req.cursor,
          limit: req.limit,
          scheduled: req.scheduled,
          sortOn: req.sort_on,
          sortOrder: req.sort_order,
        }),
      ),
      this.bus.handle(S.processingRequest, (req) => this.processingStatus.get(req.kbids, req.processing_id)),
      this.bus.handle(S.processingPush, (req) => this.processingPush.push(req)),
      this.bus.handle(S.processingPull, (req) => this.processingPull.pull(req)),
      this.bus.handle(S.getSynonyms, (req) => this.synonyms.get(req.kbid)),
      this.bus.handle(S.setSynonyms, (req) => this.synonyms.set(req.kbid, req.body)),
      this.bus.handle(S.deleteSynonyms, (req) => this.synonyms.delete(req.kbid)),
      this.bus.handle(S.processingWebhooks, (req) => this.webhookDeliveries.list(req)),
      this.bus.handle(S.getResource, (req) => this.reader.get(req)),
      this.bus.handle(S.resourceExists, (req) => this.reader.exists(req)),
      this.bus.handle(S.listResources, (req) => this.reader.list(req)),
      this.bus.handle(S.putField, (req) => this.fields.put(req)),
      this.bus.handle(S.getField, (req) => this.fields.get(req)),
      this.bus.handle(S.deleteField, (req) => this.fields.delete(req)),
      this.bus.handle(S.appendMessages, (req) => this.fields.appendMessages(req)),
      this.bus.handle(S.deleteMessage, (req) => this.fields.deleteMessage(req)),
      this.bus.handle(S.reprocessResource, (req) => this.fields.reprocess(req)),
      this.bus.handle(S.registerUpload, (req) => this.fields.registerUpload(req)),
      this.bus.handle(S.md5Exists, (req) => this.fields.md5Exists(req)),
      this.bus.handle(S.listLabelSets, (req) => this.labelsets.list(req)),
      this.bus.handle(S.listEntitiesGroups, (req) => this.entitiesGroups.list(req)),
      this.bus.handle(S.getEntitiesGroup, (req) => this.entitiesGroups.get(req)),
      this.bus.handle(S.createEntitiesGroup, (req) => this.entitiesGroups.create(req)),
      this.bus.handle(S.updateEntitiesGroup, (req) => this.entitiesGroups.update(req)),
      this.bus.handle(S.deleteEntitiesGroup, (req) => this.entitiesGroups.delete(req)),
      this.bus.handle(S.getLabelSet, (req) => this.labelsets.get(req)),
      this.bus.handle(S.setLabelSet, (req) => this.labelsets.set(req)),
      this.bus.handle(S.deleteLabelSet, (req) => this.labelsets.delete(req)),
      this.bus.handle(S.find, (req, _context, signal) => this.finder.find({ ...req, signal })),
      this.bus.handle(S.retrieve, (req, _context, signal) => this.retriever.retrieve({ ...req, signal })),
      this.bus.handle(S.hydrate, (req) => this.hydrator.hydrate(req)),
      this.bus.handle(S.augment, (req) => this.augmenter.augment(req)),
      this.bus.handle(S.catalog, (req) => this.catalog.catalog(req)),
      this.bus.handle(S.search, (req, _context, signal) => this.lists.search({ ...req, signal })),
      this.bus.handle(S.suggest, (req, _context, signal) => this.lists.suggest({ ...req, signal })),
      this.bus.handleStream(S.ask, (req, _context, signal) => this.asker.ask(req, signal)),
      this.bus.handle(S.feedback, (req) => this.asker.feedback(req)),
      this.bus.handleStream(S.predictGenerate, (req, _context, signal) => this.predictor.generate(req, signal)),
      this.bus.handle(S.predictRerank, async (req) => this.predictor.rerank(req)),
      this.bus.handle(S.predictModels, (req) => this.predictor.models(req)),
      this.bus.handle(S.summarize, (req, _context, signal) => this.summarizer.summarize(req, signal)),
      this.bus.handle(S.remiJudge, (req, _context, signal) => this.judge.judge(req, signal)),
      this.bus.handle(S.catalogFacets, (req) => this.catalog.catalogFacets(req)),
      this.bus.handle(S.graphPaths, (req, _context, signal) => this.graph.search('paths', { ...req, signal })),
      this.bus.handle(S.graphNodes, (req, _context, signal) => this.graph.search('nodes', { ...req, signal })),
      this.bus.handle(S.graphRelations, (req, _context, signal) => this.graph.search('relations', { ...req, signal })),
      this.bus.handle(S.countResources, (req) => this.reader.count(req.kbid)),
      this.bus.handle(S.kbCounters, (req) => this.reader.counters(req.kbid)),
      this.bus.handle(S.startKbExport, (req) => this.transfers.startExport(req)),
      this.bus.handle(S.kbExportStatus, (req) => this.transfers.status('export', req)),
      this.bus.handle(S.kbExportFile, (req) => this.transfers.exportFile(req)),
      this.bus.handle(S.peekKbArchive, (req) => this.transfers.peek(req)),
      this.bus.handle(S.startKbImport, (req) => this.transfers.startImport(req)),
      this.bus.handle(S.kbImportStatus, (req) => this.transfers.status('import', req)),
      this.bus.handle(S.startBackup, (req) => this.backups.start(req)),
      this.bus.handle(S.listBackups, (req) => this.backups.list(req)),
      this.bus.handle(S.deleteBackup, (req) => this.backups.delete(req)),
      this.bus.handle(S.stageRestore, (req) => this.backups.stageRestore(req)),
      this.bus.subscribe(S.resourceReindexed, (event) => this.reindexer.onReindexed(event), { durable: 'content-search-reindex' }),
      this.bus.subscribe(AccountsSubjects.kbDeleted, (event) => this.cleanup.onKbDeleted(event), { durable: 'content-kb-cleanup' }),
      this.bus.subscribe(AccountsSubjects.accountDeleted, (event) => this.backups.onAccountDeleted(event), {
        durable: 'content-account-cleanup',
      }),
      // Reprocessing a large KB outlasts an ack wait: the live handler keeps its event for up to 6 hours.
      this.bus.subscribe(AccountsSubjects.semanticModelsChanged, (event) => this.vectorsets.onChanged(event), {
        durable: 'content-vectorsets',
        ackWaitMs: 60_000,
        maxWorkingMs: 6 * 3600_000,
      }),
      this.bus.consume(UnderstandingSubjects.webhookAttempted, (attempt) => this.webhookDeliveries.recordAttempt(attempt), {
        durable: 'content-webhook-attempts',
      }),
    ]);
    if (this.options.consumeProcessingResults) {
      // Results in flight beyond one transaction's worth wait for the next (ProcessingResultsService's batches).
      await this.bus.consume(UnderstandingSubjects.fieldProcessed, (result) => this.results.apply(result), {
        durable: 'content-processed',
        concurrency: 2 * RESULTS_PER_TRANSACTION,
      });
      await this.bus.consume(S.generateQuestionAnswers, (job) => this.questionAnswers.generate(job), {
        durable: 'content-question-answers',
        concurrency: 2,
        maxDeliver: 4,
        backoffMs: [5_000, 30_000, 120_000],
        ackWaitMs: 120_000,
      });
    }
  }
}
