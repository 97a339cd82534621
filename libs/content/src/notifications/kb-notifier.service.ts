import { Inject, Injectable } from '@nestjs/common';
import { ContentSubjects, type KbNotificationDataDto, type KbNotificationType } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { LOGGER, type Logger } from '@kb/platform/observability';

/**
 * Live notifications of a KB's resource writes, processing and indexing (docs/notifications.md),
 * sent after the change committed. Best effort by design: they are for the readers of the moment,
 * a failure to send one is logged and never fails the write it reports.
 */
@Injectable()
export class KbNotifier {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  written(kbid: string, r: { id: string; title: string }, seqid: number, operation: 'created' | 'modified' | 'deleted'): void {
    this.send(kbid, 'resource_written', { resource_uuid: r.id, resource_title: r.title, seqid, operation, error: false });
  }

  processed(kbid: string, r: { id: string; title: string }, seqid: number, processingErrors: boolean): void {
    this.send(kbid, 'resource_processed', {
      resource_uuid: r.id,
      resource_title: r.title,
      seqid,
      ingestion_succeeded: true,
      processing_errors: processingErrors,
    });
  }

  indexed(kbid: string, r: { id: string; title: string }, seqid: number): void {
    this.send(kbid, 'resource_indexed', { resource_uuid: r.id, resource_title: r.title, seqid });
  }

  private send(kbid: string, type: KbNotificationType, data: KbNotificationDataDto): void {
    this.bus.publishLive(ContentSubjects.kbNotification, kbid, { kbid, type, data }).catch((err: unknown) => {
      this.logger.warn({ kbid, type, err: (err as Error).message }, 'KB notification not sent');
    });
  }
}
