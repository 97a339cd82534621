import { AuditEventEntity } from './audit/audit-event.entity';
import { ReportingInitial1763800000000 } from './migrations/1763800000000-reporting-initial';
import { ActivityEvents1764100000000 } from './migrations/1764100000000-activity-events';

export * from './reporting.module';
export { ActivityService } from './activity/activity.service';
export { AuditService } from './audit/audit.service';
export { DEFAULT_REPORTING_OPTIONS } from './reporting.tokens';
export const REPORTING_ENTITIES = [AuditEventEntity];
export const REPORTING_MIGRATIONS = [ReportingInitial1763800000000, ActivityEvents1764100000000];
export { scoreRemi, scoreRemiRaw, type EmbedTexts, type RemiInput, type RemiScores } from './remi/remi-scorer';
