import { Injectable } from '@nestjs/common';
import type { ActorDto } from '@kb/contracts';
import { randomUUID } from 'node:crypto';
import { AuditBatchService } from '../../audit/audit-batch.service';

/** What an activity event says about its request. */
export interface AuditedRequest {
  kbid: string;
  actor?: ActorDto;
}

/** Search activity (`search`, `suggest`, `chat` and `augment` events) for the reporting service. */
@Injectable()
export class SearchAuditService {
  constructor(private readonly auditBatch: AuditBatchService) {}

  /** Published in a batch (AuditBatchService); never fails the request. */
  audit(
    req: AuditedRequest,
    type: 'search' | 'suggest' | 'chat' | 'augment',
    started: number,
    details: Record<string, unknown>,
    auditMetadata?: Record<string, unknown>,
  ): void {
    this.auditBatch.record({
      event_id: randomUUID(),
      kbid: req.kbid,
      type,
      date: new Date().toISOString(),
      total_duration: Date.now() - started,
      user_type: req.actor?.user_type ?? 'user',
      ...(req.actor?.user ? { user_id: req.actor.user } : {}),
      ...(req.actor?.client_type ? { client_type: req.actor.client_type } : {}),
      ...(auditMetadata ? { audit_metadata: auditMetadata } : {}),
      details,
    });
  }
}
