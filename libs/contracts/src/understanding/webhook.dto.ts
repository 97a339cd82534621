import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { createHmac } from 'node:crypto';
import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, MaxLength, Min } from 'class-validator';

export const WebhookEvents = ['processing.completed', 'processing.failed'] as const;
export type WebhookEvent = (typeof WebhookEvents)[number];

/** Where a processing job's webhook goes: the push's `webhook_config`, else its client's `processing_webhook`. */
export class WebhookTargetDto {
  @IsDefined() @IsString() @MaxLength(8192) uri!: string;
  @IsOptional() @IsObject() headers?: Record<string, string>;
  /** The understanding-API client that pushed (internal id): its signing secret signs the calls. */
  @IsDefined() @IsString() @MaxLength(100) client!: string;
}

/** One webhook call to make (`understanding.webhook.deliver`), scheduled with the job's completion. */
export class DeliverWebhookJob {
  @IsString() delivery_id!: string;
  @IsString() processing_id!: string;
  @IsIn(WebhookEvents) event!: WebhookEvent;
  @IsString() @MaxLength(8192) uri!: string;
  @IsOptional() @IsObject() headers?: Record<string, string>;
  @IsString() client!: string;
  /** The JSON body, as sent (docs/webhooks.md). */
  // eslint-disable-next-line no-restricted-syntax -- the JSON a webhook sends to its URL (docs/webhooks.md), not a request of this API
  @IsDefined() @IsObject() body!: Record<string, unknown>;
}

/** What one delivery attempt gave (`content.webhook.attempted`), stored by content. */
export class WebhookAttemptDto {
  @ApiProperty() @IsString() delivery_id!: string;
  @ApiProperty() @IsInt() @Min(1) attempt!: number;
  @ApiProperty() @IsString() at!: string;
  @ApiPropertyOptional({ type: Number, nullable: true }) @IsOptional() @IsInt() status_code?: number | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() error?: string | null;
  @ApiProperty() @IsInt() @Min(0) duration_ms!: number;
  /** `delivered` or `failed` when this attempt ended the delivery; null when another follows. */
  @ApiPropertyOptional({ enum: ['delivered', 'failed'], nullable: true }) @IsOptional() @IsIn(['delivered', 'failed']) outcome?:
    'delivered' | 'failed' | null;
}

/**
 * The signing secret of a client's webhooks: derived from the server secret and the client, so
 * every service that signs or reveals it computes the same value and none stores it.
 */
export function webhookSecret(serverSecret: string, client: string): string {
  return `whsec_${createHmac('sha256', serverSecret).update(`processing-webhook:${client}`).digest('base64url')}`;
}

/** `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Bus request: the webhook deliveries of a job of these KBs (`content.processing.webhooks`). */
export class WebhookDeliveriesRequest {
  @IsDefined() @IsString() processing_id!: string;
  @IsDefined() @IsString({ each: true }) kbids!: string[];
}

export class WebhookAttemptViewDto {
  @ApiProperty() attempt!: number;
  @ApiProperty() at!: string;
  @ApiPropertyOptional({ type: Number, nullable: true }) status_code!: number | null;
  @ApiPropertyOptional({ type: String, nullable: true }) error!: string | null;
  @ApiProperty() duration_ms!: number;
}

export class WebhookDeliveryDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: WebhookEvents }) event!: WebhookEvent;
  @ApiProperty() uri!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) status!: 'pending' | 'delivered' | 'failed';
  @ApiProperty() created_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) finished_at!: string | null;
  @ApiProperty({ type: [WebhookAttemptViewDto] }) attempts!: WebhookAttemptViewDto[];
}

export class WebhookDeliveriesDto {
  @ApiProperty({ type: [WebhookDeliveryDto] }) deliveries!: WebhookDeliveryDto[];
}

export class WebhookSecretDto {
  /** Verifies `X-Webhook-Signature` (docs/webhooks.md). */
  @ApiProperty() secret!: string;
}
