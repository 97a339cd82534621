import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AccountsSubjects, ContentSubjects, ReportingSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { ActivityService } from './activity/activity.service';
import { AuditService } from './audit/audit.service';
import { ChainVerifyService } from './chain/chain-verify.service';
import { ActivityDownloadsService } from './downloads/activity-downloads.service';
import { KbCleanupService } from './kb-cleanup.service';
import { BlockingService } from './usage/blocking.service';
import { UsageService } from './usage/usage.service';
import { RemiService } from './remi/remi.service';
import { RemiPredictService } from './remi/remi-predict.service';

@Injectable()
export class ReportingHandlers implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly audit: AuditService,
    private readonly activity: ActivityService,
    private readonly chain: ChainVerifyService,
    private readonly downloads: ActivityDownloadsService,
    private readonly usage: UsageService,
    private readonly blocking: BlockingService,
    private readonly remi: RemiService,
    private readonly remiPredict: RemiPredictService,
    private readonly cleanup: KbCleanupService,
  ) {}

  async onModuleInit(): Promise<void> {
    await Promise.all([
      // Events come in bursts (search events are published together): claimed 64 at a time, their rows go in one insert.
      this.bus.subscribe(ContentSubjects.auditRecorded, (e) => this.audit.record(e), { durable: 'reporting-audit', concurrency: 64 }),
      // The events of requests come several to a message: each is recorded (and batched into the inserts) like one on its own.
      this.bus.subscribe(ContentSubjects.auditBatch, async (b) => void (await Promise.all(b.events.map((e) => this.audit.record(e)))), {
        durable: 'reporting-audit-batch',
        concurrency: 8,
      }),
      this.bus.handle(ReportingSubjects.countAuditEvents, (req) => this.audit.count(req)),
      this.bus.handle(ReportingSubjects.listAuditEvents, (req) => this.audit.list(req)),
      this.bus.handleStream(ReportingSubjects.queryActivity, (req, _context, signal) => this.activity.query(req, signal)),
      this.bus.handle(ReportingSubjects.activityMonths, (req) => this.activity.months(req)),
      this.bus.handle(ReportingSubjects.verifyActivityChain, (req) => this.chain.verify(req)),
      this.bus.handle(ReportingSubjects.requestActivityDownload, (req) => this.downloads.request(req)),
      this.bus.handle(ReportingSubjects.activityDownloadStatus, (req) => this.downloads.status(req)),
      this.bus.handleStream(ReportingSubjects.activityMonthCsv, (req, _context, signal) => this.downloads.monthCsv(req, signal)),
      this.bus.subscribe(AccountsSubjects.kbCreated, (e) => this.usage.rememberKb(e.kb_id, e.account_id), { durable: 'reporting-kbs' }),
      // A deleted KB's activity, scores, chains, downloads and usage rows go with it (its counters stay the account's).
      this.bus.subscribe(
        AccountsSubjects.kbDeleted,
        async (e) => {
          await this.cleanup.onKbDeleted(e);
          await this.blocking.limitsChanged(e.account_id);
        },
        { durable: 'reporting-kb-cleanup' },
      ),
      this.bus.subscribe(AccountsSubjects.accountLimitsChanged, (e) => this.blocking.limitsChanged(e.account_id), {
        durable: 'reporting-limits',
      }),
      this.bus.handle(ReportingSubjects.getUsage, (req) => this.usage.get(req)),
      this.bus.handle(ReportingSubjects.listBlocking, () => this.blocking.list()),
      this.bus.handle(ReportingSubjects.remiQuery, (req) => this.remi.query(req)),
      this.bus.handle(ReportingSubjects.remiScores, (req) => this.remi.scores(req)),
      this.bus.handle(ReportingSubjects.remiEvent, (req) => this.remi.event(req)),
      this.bus.handle(ReportingSubjects.predictRemi, (req) => this.remiPredict.evaluate(req)),
    ]);
    this.blocking.start();
  }
}
