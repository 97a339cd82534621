import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  UnderstandingSubjects,
  maskUrlCredentials,
  type ProcessFieldErrorDto,
  type WebhookAttemptDto,
  type WebhookDeliveriesDto,
  type WebhookDeliveriesRequest,
  type WebhookEvent,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { OutboxEntity } from '../entities/outbox.entity';
import { OutboxService } from '../outbox/outbox.service';

/** A processing status record as its completion returned it. */
export interface CompletedJob {
  processing_id: string;
  kbid: string;
  rid: string;
  field_type: string;
  field_id: string;
  seqid: string | number;
  labels: string[];
  retries: number;
  completed_at: Date | string;
  webhook: { uri: string; headers?: Record<string, string>; client: string } | null;
}

/**
 * Processing webhooks, content's side (docs/webhooks.md). A delivery is scheduled in the
 * transaction that completes its job: its row, and the outbox entry that enqueues the call for the
 * understanding workers, commit with the completion or not at all. The workers report every
 * attempt back (`understanding.webhook.attempted`); they are kept here for the client to read.
 */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  async schedule(m: EntityManager, job: CompletedJob, error: ProcessFieldErrorDto | null): Promise<OutboxEntity[]> {
    if (!job.webhook) return [];
    const id = randomUUID();
    const event: WebhookEvent = error ? 'processing.failed' : 'processing.completed';
    const completedAt = new Date(job.completed_at).toISOString();
    const body = {
      id,
      event,
      created_at: new Date().toISOString(),
      processing_id: job.processing_id,
      kbid: job.kbid,
      resource_id: job.rid,
      field: { type: job.field_type, id: job.field_id },
      seqid: Number(job.seqid),
      status: error ? 'ERROR' : 'PROCESSED',
      errors: error ? [{ body: error.body, code: error.code, code_str: error.code_str, created: completedAt }] : [],
      completed_at: completedAt,
      retries: job.retries,
      labels: job.labels ?? [],
    };
    await m.query(`INSERT INTO content.webhook_deliveries (id, processing_id, kbid, event, uri) VALUES ($1, $2, $3, $4, $5)`, [
      id,
      job.processing_id,
      job.kbid,
      event,
      job.webhook.uri,
    ]);
    return this.outbox.add(m, [
      {
        kind: 'queue',
        target: UnderstandingSubjects.deliverWebhook.subject,
        payload: {
          delivery_id: id,
          processing_id: job.processing_id,
          event,
          uri: job.webhook.uri,
          ...(job.webhook.headers ? { headers: job.webhook.headers } : {}),
          client: job.webhook.client,
          body,
        },
      },
    ]);
  }

  /** Idempotent: an attempt reported twice (a redelivered report) is stored once. */
  async recordAttempt(a: WebhookAttemptDto): Promise<void> {
    await this.ds.transaction(async (m) => {
      const inserted = (await m.query(
        `WITH ins AS (
           INSERT INTO content.webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms)
           SELECT $1::uuid, $2, $3::timestamptz, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM content.webhook_deliveries WHERE id = $1::uuid)
           ON CONFLICT (delivery_id, attempt) DO NOTHING RETURNING 1
         ) SELECT count(*)::int AS n FROM ins`,
        [a.delivery_id, a.attempt, a.at, a.status_code ?? null, a.error ?? null, a.duration_ms],
      )) as { n: number }[];
      if ((inserted[0]?.n ?? 0) === 0) return;
      await m.query(
        `UPDATE content.webhook_deliveries
            SET attempts = greatest(attempts, $2), last_status_code = $3, last_error = $4,
                status = CASE WHEN status = 'pending' AND $5::text IS NOT NULL THEN $5::text ELSE status END,
                finished_at = CASE WHEN status = 'pending' AND $5::text IS NOT NULL THEN $6::timestamptz ELSE finished_at END
          WHERE id = $1::uuid`,
        [a.delivery_id, a.attempt, a.status_code ?? null, a.error ?? null, a.outcome ?? null, a.at],
      );
    });
  }

  /** The webhook deliveries of one job of the client's KBs, oldest first, each with its attempts. */
  async list(req: WebhookDeliveriesRequest): Promise<WebhookDeliveriesDto> {
    const deliveries = (await this.ds.query(
      `SELECT id, event, uri, status, attempts, last_status_code, last_error, created_at, finished_at FROM content.webhook_deliveries
        WHERE processing_id = $1 AND kbid = ANY($2::uuid[]) ORDER BY created_at, id`,
      [req.processing_id, req.kbids],
    )) as {
      id: string;
      event: WebhookEvent;
      uri: string;
      status: 'pending' | 'delivered' | 'failed';
      attempts: number;
      last_status_code: number | null;
      last_error: string | null;
      created_at: Date;
      finished_at: Date | null;
    }[];
    if (deliveries.length === 0) {
      const known = (await this.ds.query(`SELECT 1 FROM content.processing_requests WHERE processing_id = $1 AND kbid = ANY($2::uuid[])`, [
        req.processing_id,
        req.kbids,
      ])) as unknown[];
      if (known.length === 0) throw new DomainError(ErrorCodes.NOT_FOUND, 'Processing request not found');
      return { deliveries: [] };
    }
    const attempts = (await this.ds.query(
      `SELECT delivery_id, attempt, at, status_code, error, duration_ms FROM content.webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY attempt`,
      [deliveries.map((d) => d.id)],
    )) as { delivery_id: string; attempt: number; at: Date; status_code: number | null; error: string | null; duration_ms: number }[];
    return {
      deliveries: deliveries.map((d) => ({
        id: d.id,
        event: d.event,
        uri: maskUrlCredentials(d.uri),
        status: d.status,
        created_at: new Date(d.created_at).toISOString(),
        finished_at: d.finished_at ? new Date(d.finished_at).toISOString() : null,
        attempts: attempts
          .filter((a) => a.delivery_id === d.id)
          .map((a) => ({
            attempt: a.attempt,
            at: new Date(a.at).toISOString(),
            status_code: a.status_code,
            error: a.error,
            duration_ms: a.duration_ms,
          })),
      })),
    };
  }
}
