import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import {
  AccountsSubjects,
  ContentSubjects,
  DomainError,
  ErrorCodes,
  ProcessingPushResponseDto,
  PushConversationDto,
  PushLinkDto,
  PushPayloadDto,
  WebhookDeliveriesDto,
  WebhookSecretDto,
  ProcessingStatusPage,
  ProcessingStatusRecord,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf, queryOf } from '../http/dto.pipe';
import { QueryBool, QueryInt } from '../http/query-transforms';
import { actorOf, busContextOf } from '../http/request-context';

export class ProcessingStatusQuery {
  @IsOptional() @IsString() @MaxLength(500) cursor?: string;
  @IsOptional() @QueryBool() @IsBoolean() scheduled?: boolean;
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(100) limit?: number;
}

/** Processing status records of a Knowledge Box (API-MAP §3 "Processing status"; spec 2.7). */
@ApiTags('Processing')
@Controller('api/v1/kb/:kbid')
export class ProcessingStatusController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('processing-status')
  @ApiOperation({
    summary: 'Processing status of the Knowledge Box',
    description:
      "One record per field processing job, newest first (`limit` default 20, at most 100; `cursor` from the previous page). `schedule_order` is the job's place in the queue (0 once completed), `schedule_eta` the seconds until it is expected to start.",
  })
  @ApiResponse({ status: 200, type: ProcessingStatusPage })
  list(
    @Param('kbid') kbid: string,
    @Query(queryOf(ProcessingStatusQuery)) q: ProcessingStatusQuery,
    @Req() req: AuthedRequest,
  ): Promise<ProcessingStatusPage> {
    return this.bus.request(ContentSubjects.processingStatus, { kbid, ...q }, busContextOf(req));
  }
}

export class ProcessingRequestsListQuery extends ProcessingStatusQuery {
  @IsOptional() @IsString() @MaxLength(100) kbid?: string;
  @IsOptional() @IsIn(['timestamp', 'scheduled_at', 'completed_at']) sort_on?: 'timestamp' | 'scheduled_at' | 'completed_at';
  @IsOptional() @IsIn(['asc', 'desc']) sort_order?: 'asc' | 'desc';
}

/**
 * The understanding API's "Get Processed Data" (spec 4.5, API-MAP §1.5), for understanding-API
 * clients (X-SVC-UAKEY): the processing status records of the KBs of the client's account.
 */
@ApiTags('Understanding API')
// The push's field maps name these by $ref.
@ApiExtraModels(PushLinkDto, PushConversationDto)
@Controller('api/v1/processing')
export class ProcessingRequestsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('requests')
  @ApiOperation({
    summary: 'Get Processed Data (list)',
    description:
      "Records of the processing jobs of the KBs of the client's account (`kbid` narrows to one), sorted by `sort_on` (timestamp, scheduled_at, completed_at; default timestamp) in `sort_order` (default asc); `limit` default 20, at most 100; `cursor` from the previous page.",
  })
  @ApiResponse({ status: 200, type: ProcessingStatusPage })
  async list(
    @Query(queryOf(ProcessingRequestsListQuery)) q: ProcessingRequestsListQuery,
    @Req() req: AuthedRequest,
  ): Promise<ProcessingStatusPage> {
    const kbids = await this.accountKbs(req);
    const { kbid, sort_on, sort_order, ...page } = q;
    return this.bus.request(
      ContentSubjects.processingRequests,
      {
        kbids: kbid === undefined ? kbids : kbids.filter((k) => k === kbid),
        ...page,
        sort_on: sort_on ?? 'timestamp',
        sort_order: sort_order ?? 'asc',
      },
      busContextOf(req),
    );
  }

  @Get('requests/:processing_id')
  @ApiOperation({
    summary: 'Get Processed Data (one)',
    description: "One processing status record of the client's account; 404 for any other.",
  })
  @ApiResponse({ status: 200, type: ProcessingStatusRecord })
  async get(@Param('processing_id') processingId: string, @Req() req: AuthedRequest): Promise<ProcessingStatusRecord> {
    return this.bus.request(
      ContentSubjects.processingRequest,
      { kbids: await this.accountKbs(req), processing_id: processingId },
      busContextOf(req),
    );
  }

  @Post('push')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send Data To Process',
    description:
      "Writes the pushed fields (textfield, linkfield, conversationfield; genericfield title and summary) into the resource `uuid` (else `slug`) of `kbid`, a KB of the client's account, creating it when it does not exist, and schedules their processing. `filefield` maps field ids to tokens from Upload Binary File (or its TUS routes), and message `attachments` list such tokens: the files move into the resource and each token is used once (an unknown or used token → 422, nothing written). `processing_id` names the job of the first field (by type, then id); `labels` are shown on the jobs' status records; `webhook_config` (else the client's `processing_webhook`) is called when each job completes (docs/webhooks.md). Layout fields are refused (422); `learning_config` is accepted, the KB's model configuration applies.",
  })
  @ApiResponse({ status: 200, type: ProcessingPushResponseDto })
  async push(@Body(bodyOf(PushPayloadDto)) body: PushPayloadDto, @Req() req: AuthedRequest): Promise<ProcessingPushResponseDto> {
    if (!(await this.accountKbs(req)).includes(body.kbid))
      throw new DomainError(ErrorCodes.KB_NOT_FOUND, "Knowledge Box not found in the client's account");
    const actor = actorOf(req);
    const account = req.principal?.account_id ?? '';
    const client = req.principal?.id ?? '';
    const hook = (await this.bus.request(AccountsSubjects.resolveNuaClientWebhook, { account_id: account, client }, busContextOf(req)))
      .processing_webhook;
    return this.bus.request(
      ContentSubjects.processingPush,
      {
        actor: { ...actor, user: body.userid ?? actor.user },
        body,
        account_id: account,
        client,
        ...(hook ? { client_webhook: hook } : {}),
      },
      busContextOf(req),
    );
  }

  @Get('requests/:processing_id/webhooks')
  @ApiOperation({
    summary: 'Webhook deliveries of a processing job',
    description:
      "Each webhook call scheduled when the job completed (docs/webhooks.md): its event, address, status (pending, delivered, failed) and every attempt with its time, HTTP status or error, and duration. 404 for a job outside the client's account.",
  })
  @ApiResponse({ status: 200, type: WebhookDeliveriesDto })
  async webhooks(@Param('processing_id') processingId: string, @Req() req: AuthedRequest): Promise<WebhookDeliveriesDto> {
    return this.bus.request(
      ContentSubjects.processingWebhooks,
      { kbids: await this.accountKbs(req), processing_id: processingId },
      busContextOf(req),
    );
  }

  @Get('webhook-secret')
  @ApiOperation({
    summary: 'Webhook signing secret',
    description:
      'The secret that signs this client\'s processing webhooks (`X-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, docs/webhooks.md).',
  })
  @ApiResponse({ status: 200, type: WebhookSecretDto })
  webhookSecret(@Req() req: AuthedRequest): Promise<WebhookSecretDto> {
    return this.bus.request(
      AccountsSubjects.nuaClientWebhookSecret,
      { account_id: req.principal?.account_id ?? '', client: req.principal?.id ?? '' },
      busContextOf(req),
    );
  }

  private async accountKbs(req: AuthedRequest): Promise<string[]> {
    const account = req.principal?.account_id ?? '';
    return (await this.bus.request(AccountsSubjects.listKbs, { account_id: account, whole_account: true }, busContextOf(req))).map(
      (kb) => kb.id,
    );
  }
}
