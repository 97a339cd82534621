import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { UnderstandingSubjects, webhookSecret, webhookSignature, type DeliverWebhookJob, type WebhookAttemptDto } from '@kb/contracts';
import { MESSAGE_BUS, type DeliveryMeta, type MessageBus } from '@kb/platform/messaging';
import { OutboundError, outboundHttp } from '@kb/platform/net';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';

/** Attempts per delivery, and the waits between them (about four hours in all). */
export const WEBHOOK_MAX_ATTEMPTS = 8;
export const WEBHOOK_BACKOFF_MS = [10_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000];
const TIMEOUT_MS = 10_000;
/** Headers of a webhook configuration that would change what the call means; the service sets them itself. */
const RESERVED = /^(host|content-type|content-length|transfer-encoding|connection|user-agent|x-webhook-.*)$/i;

/**
 * Calls processing webhooks (docs/webhooks.md): one POST per attempt, signed with the client's
 * secret, no redirects followed, 10 s timeout. 2xx delivers; 408, 429, 5xx and network errors are
 * retried with backoff by the bus, up to WEBHOOK_MAX_ATTEMPTS; any other answer, or an address
 * the guarded outbound client refuses, fails the delivery at once. The answer's body is never read
 * (nor reported): a webhook pointed at an internal service learns nothing from it. Every attempt is reported to content.
 * At least once: a worker that dies after the call but before its report calls again, with the
 * same `X-Webhook-Id`.
 */
@Injectable()
export class WebhookWorkerService implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.consumeJobs) return;
    await this.bus.consume(UnderstandingSubjects.deliverWebhook, (job, meta) => this.deliver(job, meta), {
      durable: 'understanding-webhooks',
      concurrency: 4,
      maxDeliver: this.maxAttempts,
      backoffMs: this.options.webhookBackoffMs ?? WEBHOOK_BACKOFF_MS,
      ackWaitMs: 60_000,
    });
  }

  private get maxAttempts(): number {
    return this.options.webhookMaxAttempts ?? WEBHOOK_MAX_ATTEMPTS;
  }

  async deliver(job: DeliverWebhookJob, meta: DeliveryMeta): Promise<void> {
    const attempt = meta.deliveryCount;
    const started = Date.now();
    const at = new Date(started).toISOString();
    let statusCode: number | null = null;
    let error: string | null = null;
    let retry = false;
    try {
      const body = JSON.stringify(job.body);
      const secret = webhookSecret(this.signingSecret(), job.client);
      const extra = Object.fromEntries(
        Object.entries(job.headers ?? {})
          .filter(([k, v]) => typeof v === 'string' && !RESERVED.test(k))
          .slice(0, 50),
      );
      const res = await (this.options.outbound ?? outboundHttp()).fetch(job.uri, {
        method: 'POST',
        redirect: 'manual',
        timeoutMs: TIMEOUT_MS,
        maxBytes: 64 * 1024,
        body,
        headers: {
          ...extra,
          'content-type': 'application/json',
          'user-agent': 'knowledge-box-service-webhooks/1',
          'x-webhook-id': job.delivery_id,
          'x-webhook-event': job.event,
          'x-webhook-attempt': String(attempt),
          'x-webhook-signature': webhookSignature(secret, Math.floor(Date.now() / 1000), body),
        },
      });
      statusCode = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) {
        error = `HTTP ${res.status}`;
        retry = res.status === 408 || res.status === 429 || res.status >= 500;
      }
    } catch (err) {
      error = (err as Error).message || String(err);
      // A refused address stays refused; anything else (DNS, connection, timeout) may pass later.
      retry = !(err instanceof OutboundError && err.code === 'FORBIDDEN_ADDRESS');
    }
    const last = attempt >= this.maxAttempts;
    const outcome: WebhookAttemptDto['outcome'] = error === null ? 'delivered' : retry && !last ? null : 'failed';
    const report: WebhookAttemptDto = {
      delivery_id: job.delivery_id,
      attempt,
      at,
      status_code: statusCode,
      error,
      duration_ms: Date.now() - started,
      outcome,
    };
    await this.bus.enqueue(UnderstandingSubjects.webhookAttempted, report, { msgId: `${job.delivery_id}:${attempt}` });
    if (outcome === null) {
      this.logger.warn({ delivery_id: job.delivery_id, attempt, err: error }, 'webhook attempt failed; will retry');
      throw new Error(`webhook attempt ${attempt} failed: ${error}`);
    }
    if (outcome === 'failed') this.logger.warn({ delivery_id: job.delivery_id, attempt, err: error }, 'webhook delivery failed');
  }

  private signingSecret(): string {
    const secret = this.options.webhookSigningSecret;
    if (!secret) throw new Error('this process has no server secret to sign webhooks with');
    return secret;
  }
}
