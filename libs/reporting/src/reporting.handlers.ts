import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ContentSubjects, ReportingSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { ActivityService } from './activity/activity.service';
import { AuditService } from './audit/audit.service';
import { RemiService } from './remi/remi.service';

@Injectable()
export class ReportingHandlers implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly audit: AuditService,
    private readonly activity: ActivityService,
    private readonly remi: RemiService,
  ) {}

  async onModuleInit(): Promise<void> {
    await Promise.all([
      // Events come in bursts (search events are published together): claimed 64 at a time, their rows go in one insert.
      this.bus.subscribe(ContentSubjects.auditRecorded, (e) => this.audit.record(e), { durable: 'reporting-audit', concurrency: 64 }),
      this.bus.handle(ReportingSubjects.countAuditEvents, (req) => this.audit.count(req)),
      this.bus.handle(ReportingSubjects.listAuditEvents, (req) => this.audit.list(req)),
      this.bus.handleStream(ReportingSubjects.queryActivity, (req, _context, signal) => this.activity.query(req, signal)),
      this.bus.handle(ReportingSubjects.activityMonths, (req) => this.activity.months(req)),
      this.bus.handle(ReportingSubjects.remiQuery, (req) => this.remi.query(req)),
      this.bus.handle(ReportingSubjects.remiScores, (req) => this.remi.scores(req)),
      this.bus.handle(ReportingSubjects.remiEvent, (req) => this.remi.event(req)),
    ]);
  }
}
