import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ActivityService } from './activity/activity.service';
import { ChainSealerService } from './chain/chain-sealer.service';
import { ChainVerifyService } from './chain/chain-verify.service';
import { ActivityDownloadsService } from './downloads/activity-downloads.service';
import { AuditService } from './audit/audit.service';
import { RemiWorkerService } from './remi/remi-worker.service';
import { RemiService } from './remi/remi.service';
import { RemiPredictService } from './remi/remi-predict.service';
import { KbCleanupService } from './kb-cleanup.service';
import { ReportingHandlers } from './reporting.handlers';
import { BlockingService } from './usage/blocking.service';
import { UsageService } from './usage/usage.service';
import { DEFAULT_REPORTING_OPTIONS, REPORTING_DATA_SOURCE, REPORTING_OPTIONS, type ReportingOptions } from './reporting.tokens';

/** Root module of the reporting service: activity (audit) logs, usage metering and the blocks of exhausted limits, REMi scores of `/ask` answers, the hash chains of the activity log. */
@Module({})
export class ReportingModule {
  static forRoot(options: { dataSource: DataSource } & Partial<ReportingOptions>): DynamicModule {
    const { dataSource, ...rest } = options;
    return {
      module: ReportingModule,
      providers: [
        { provide: REPORTING_DATA_SOURCE, useValue: dataSource },
        { provide: REPORTING_OPTIONS, useValue: { ...DEFAULT_REPORTING_OPTIONS, ...rest } },
        AuditService,
        ActivityService,
        UsageService,
        BlockingService,
        RemiService,
        RemiPredictService,
        RemiWorkerService,
        ChainSealerService,
        ChainVerifyService,
        ActivityDownloadsService,
        KbCleanupService,
        ReportingHandlers,
      ],
    };
  }
}
