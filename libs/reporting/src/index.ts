import { AuditEventEntity } from './audit/audit-event.entity';
import { ReportingInitial1763800000000 } from './migrations/1763800000000-reporting-initial';
import { ActivityEvents1764100000000 } from './migrations/1764100000000-activity-events';
import { Usage1764200000000 } from './migrations/1764200000000-usage';
import { RemiScores1764400000000 } from './migrations/1764400000000-remi-scores';
import { ActivityChain1764600000000 } from './migrations/1764600000000-activity-chain';
import { ActivityDownloads1764700000000 } from './migrations/1764700000000-activity-downloads';
import { DeletedKbs1764850000000 } from './migrations/1764850000000-deleted-kbs';
import { DownloadNotify1764860000000 } from './migrations/1764860000000-download-notify';
import { RemiJudge1764870000000 } from './migrations/1764870000000-remi-judge';
import { UsageKeys1764880000000 } from './migrations/1764880000000-usage-keys';
import { UsageAccounts1764890000000 } from './migrations/1764890000000-usage-accounts';

export * from './reporting.module';
export { ActivityService } from './activity/activity.service';
export { AuditService } from './audit/audit.service';
export { UsageService } from './usage/usage.service';
export { BlockingService } from './usage/blocking.service';
export { RemiService } from './remi/remi.service';
export { RemiWorkerService } from './remi/remi-worker.service';
export { DEFAULT_REPORTING_OPTIONS } from './reporting.tokens';
export const REPORTING_ENTITIES = [AuditEventEntity];
export const REPORTING_MIGRATIONS = [
  ReportingInitial1763800000000,
  ActivityEvents1764100000000,
  Usage1764200000000,
  RemiScores1764400000000,
  ActivityChain1764600000000,
  ActivityDownloads1764700000000,
  DeletedKbs1764850000000,
  DownloadNotify1764860000000,
  RemiJudge1764870000000,
  UsageKeys1764880000000,
  UsageAccounts1764890000000,
];
export { ActivityDownloadsService } from './downloads/activity-downloads.service';
export { ChainSealerService } from './chain/chain-sealer.service';
export { ChainVerifyService } from './chain/chain-verify.service';
export { KbCleanupService } from './kb-cleanup.service';
export { canonicalJson, chainHash, checkChain, GENESIS_HASH, type ChainRecord } from './chain/chain-hash';
export { verifyExport } from './chain/chain-export';
export { scoreRemi, scoreRemiRaw, type EmbedTexts, type RemiInput, type RemiScores } from './remi/remi-scorer';
