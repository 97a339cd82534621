import { Module, type DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AuditService } from './audit/audit.service';
import { ReportingHandlers } from './reporting.handlers';
import { REPORTING_DATA_SOURCE } from './reporting.tokens';

/** Root module of the reporting service: activity (audit) logs now; usage and REMi scores later. */
@Module({})
export class ReportingModule {
  static forRoot(options: { dataSource: DataSource }): DynamicModule {
    return {
      module: ReportingModule,
      providers: [{ provide: REPORTING_DATA_SOURCE, useValue: options.dataSource }, AuditService, ReportingHandlers],
    };
  }
}
