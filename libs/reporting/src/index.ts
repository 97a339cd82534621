import { AuditEventEntity } from './audit/audit-event.entity';
import { ReportingInitial1763800000000 } from './migrations/1763800000000-reporting-initial';

export * from './reporting.module';
export const REPORTING_ENTITIES = [AuditEventEntity];
export const REPORTING_MIGRATIONS = [ReportingInitial1763800000000];
