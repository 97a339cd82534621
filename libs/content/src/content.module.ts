import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ContentHandlers } from './content.handlers';
import { CONTENT_DATA_SOURCE, CONTENT_OPTIONS, type ContentOptions } from './content.tokens';
import { KbCleanupService } from './kbs/kb-cleanup.service';
import { OutboxService } from './outbox/outbox.service';
import { ProcessingStatusService } from './processing/processing-requests';
import { ProcessingPushService } from './processing/processing-push.service';
import { PushFilesService } from './processing/push-files';
import { ProcessingPullService } from './processing/processing-pull.service';
import { WebhookDeliveriesService } from './processing/webhook-deliveries.service';
import { QuestionAnswersService } from './processing/question-answers.service';
import { VectorsetsService } from './processing/vectorsets.service';
import { SynonymsService } from './search/synonyms.service';
import { ProcessingResultsService } from './processing/processing-results.service';
import { AuditBatchService } from './audit/audit-batch.service';
import { ResourceReaderService } from './resources/resource-reader.service';
import { ResourcesRepository } from './resources/resources.repository';
import { ResourcesService } from './resources/resources.service';
import { KbNotifier } from './notifications/kb-notifier.service';
import { FieldsService } from './resources/fields.service';
import { LabelSetsService } from './labelsets/labelsets.service';
import { EntitiesGroupsService } from './entities-groups/entities-groups.service';
import { SearchIndexerService } from './search/index/search-indexer.service';
import { FindService } from './search/find.service';
import { FindMerge } from './search/find/find-merge';
import { FindPlanner } from './search/find/find-plan';
import { FindResults } from './search/find/find-results';
import { FindRetrieval } from './search/find/find-retrieval';
import { SearchAuditService } from './search/find/search-audit.service';
import { SearchRepository } from './search/find/search.repository';
import { RetrieveService } from './search/retrieve.service';
import { HydrateService } from './search/hydrate.service';
import { AugmentService } from './search/augment.service';
import { SEARCH_RESOURCES } from './search/search-resources.port';
import { SearchResourcesReader } from './resources/search-resources.reader';
import { CatalogService } from './search/catalog.service';
import { SearchListsService } from './search/search-lists.service';
import { AskService } from './ask/ask.service';
import { GraphStrategyService } from './ask/graph/graph-strategy.service';
import { AskImages } from './ask/ask-images';
import { AskContextAssembler } from './ask/ask-context';
import { PredictService } from './predict/predict.service';
import { QueryRephraser } from './ask/query-rephraser.service';
import { SummarizeService } from './ask/summarize.service';
import { RemiJudgeService } from './ask/remi-judge.service';
import { SearchReindexService } from './resources/search-reindex.service';
import { SearchMaintenanceService } from './search/index/search-maintenance.service';
import { SearchContextService } from './search/search-context.service';
import { GraphService } from './search/graph.service';
import { SearchMemoryService } from './search/memory/search-memory.service';
import { KbExporter } from './transfer/kb-exporter';
import { KbImporter } from './transfer/kb-importer';
import { ImportedResources } from './transfer/imported-resources';
import { KbTransfersService } from './transfer/kb-transfers.service';
import { KbBackupsService } from './transfer/kb-backups.service';
import { KbConfigsRepository } from './kb-config/kb-configs.repository';
import { KbConfigsService } from './kb-config/kb-configs.service';
import { KbConfigHandlers } from './kb-config/kb-config.handlers';

/** Root module of the content service (resources, fields, and later search and ask). */
@Module({})
export class ContentModule {
  static forRoot(options: ContentOptions & { dataSource: DataSource }): DynamicModule {
    const { dataSource, ...rest } = options;
    return {
      module: ContentModule,
      providers: [
        { provide: CONTENT_DATA_SOURCE, useValue: dataSource },
        { provide: CONTENT_OPTIONS, useValue: rest },
        ResourcesRepository,
        OutboxService,
        AuditBatchService,
        KbNotifier,
        ResourcesService,
        FieldsService,
        LabelSetsService,
        EntitiesGroupsService,
        ResourceReaderService,
        ProcessingResultsService,
        KbCleanupService,
        ContentHandlers,
        SearchIndexerService,
        SearchContextService,
        FindPlanner,
        FindRetrieval,
        FindMerge,
        FindResults,
        SearchRepository,
        { provide: SEARCH_RESOURCES, useClass: SearchResourcesReader },
        SearchAuditService,
        FindService,
        RetrieveService,
        HydrateService,
        AugmentService,
        CatalogService,
        GraphService,
        SearchListsService,
        AskService,
        GraphStrategyService,
        AskImages,
        AskContextAssembler,
        PredictService,
        QueryRephraser,
        SummarizeService,
        RemiJudgeService,
        SearchReindexService,
        SearchMaintenanceService,
        SearchMemoryService,
        ProcessingStatusService,
        ProcessingPushService,
        PushFilesService,
        ProcessingPullService,
        WebhookDeliveriesService,
        QuestionAnswersService,
        VectorsetsService,
        SynonymsService,
        KbExporter,
        KbImporter,
        ImportedResources,
        KbTransfersService,
        KbBackupsService,
        KbConfigsRepository,
        KbConfigsService,
        KbConfigHandlers,
      ],
    };
  }
}
