import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import {
  AccountsSubjects,
  ContentSubjects,
  MAX_PULL_LIMIT,
  PullV1ResponseDto,
  PullV2BodyDto,
  PullV2ResponseDto,
  type ProcessingPullRequest,
  type ProcessingPullResult,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf, queryOf } from '../http/dto.pipe';
import { QueryInt } from '../http/query-transforms';
import { busContextOf } from '../http/request-context';

export class PullV1Query {
  /** 1-based, as in the spec (default 1). */
  @IsOptional() @QueryInt() @IsInt() @Min(1) partition?: number;
  @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(MAX_PULL_LIMIT) limit?: number;
  @IsOptional() @QueryInt() @IsInt() @Min(0) @Max(30) timeout?: number;
  @IsOptional() @QueryInt() @IsInt() @Min(0) from_cursor?: number;
}

const V2_TTL_S = 60;
const POLL_MS = 500;

/**
 * The understanding API's Pull (API-MAP §1.5): the processed results of the jobs of the KBs of the
 * client's account, in completion order. v1 (`GET`) is stateless (the client passes `from_cursor`);
 * v2 (`POST`) keeps the client's acknowledged position and redelivers what it did not acknowledge
 * once the lease (`ttl`) ends. Both long-poll up to `timeout` seconds when nothing is there.
 */
@ApiTags('Understanding API')
@Controller('api')
export class ProcessingPullController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('v1/processing/pull')
  @ApiOperation({
    summary: 'Pull processed data (v1)',
    description:
      "Up to `limit` (default 5, at most 50) completed jobs after `from_cursor`, waiting up to `timeout` seconds (default 5, at most 30) for one. Each payload is base64 of a JSON document (docs/decisions/0009). `partition` (1 to the client's `partitions`, default 1) narrows to the resources hashed to it.",
  })
  @ApiResponse({ status: 200, type: PullV1ResponseDto })
  async v1(@Query(queryOf(PullV1Query)) q: PullV1Query, @Req() req: AuthedRequest): Promise<PullV1ResponseDto> {
    const base = await this.base(req, q.limit ?? 5, q.partition ?? 1);
    const res = await this.longPoll(
      req,
      { ...base, mode: 'v1', ...(q.from_cursor !== undefined ? { from_cursor: q.from_cursor } : {}) },
      q.timeout ?? 5,
    );
    const payloads = res.messages.map((m) => m.payload);
    return {
      status: payloads.length > 0 ? 'ok' : 'empty',
      payload: payloads[0] ?? null,
      payloads,
      msgid: res.messages.at(-1)?.processing_id ?? null,
      cursor: res.cursor,
    };
  }

  @Post('v2/processing/pull')
  @ApiOperation({
    summary: 'Pull processed data (v2)',
    description:
      "Acknowledges `ack` (cumulative: a token acknowledges the messages before it), then delivers up to `limit` (default 1, at most 50) completed jobs after the client's position, waiting up to `timeout` seconds (default 0, at most 30). Delivered messages are leased for `ttl` seconds, then delivered again unless acknowledged. 204 when there is nothing.",
  })
  @ApiResponse({ status: 200, type: PullV2ResponseDto })
  @ApiResponse({ status: 204, description: 'Nothing to pull' })
  @HttpCode(200)
  async v2(
    @Body(bodyOf(PullV2BodyDto)) body: PullV2BodyDto,
    @Req() req: AuthedRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<PullV2ResponseDto | undefined> {
    const base = await this.base(req, body.limit ?? 1);
    const out = await this.longPoll(req, { ...base, mode: 'v2', ack: body.ack ?? [], ttl_s: V2_TTL_S }, body.timeout ?? 0);
    if (out.messages.length === 0) {
      res.status(204);
      return undefined;
    }
    return {
      messages: out.messages.map((m) => ({
        payload: m.payload,
        headers: { processing_id: m.processing_id },
        ack_token: m.ack_token,
        seq: m.seq,
      })),
      ttl: V2_TTL_S,
      pending: out.pending,
    };
  }

  private async base(req: AuthedRequest, limit: number, partition?: number): Promise<Omit<ProcessingPullRequest, 'mode'>> {
    const account = req.principal?.account_id ?? '';
    const consumer = req.principal?.id ?? '';
    const ctx = busContextOf(req);
    const [kbs, client] = await Promise.all([
      this.bus.request(AccountsSubjects.listKbs, { account_id: account, whole_account: true }, ctx),
      this.bus.request(AccountsSubjects.getNuaClient, { account_id: account, client: consumer }, ctx),
    ]);
    return {
      kbids: kbs.map((kb) => kb.id),
      consumer,
      limit,
      partitions: client.partitions,
      ...(partition !== undefined ? { partition } : {}),
    };
  }

  /** Asks again every half second until something is there, the time is up, or the client left. */
  private async longPoll(req: AuthedRequest, pull: ProcessingPullRequest, timeoutS: number): Promise<ProcessingPullResult> {
    const deadline = Date.now() + timeoutS * 1000;
    let gone = false;
    req.once('close', () => (gone = true));
    let request = pull;
    for (;;) {
      const res = await this.bus.request(ContentSubjects.processingPull, request, busContextOf(req));
      if (res.messages.length > 0 || gone || Date.now() + POLL_MS > deadline) return res;
      // Acknowledgements were applied by the first request.
      if (request.ack) request = { ...request, ack: [] };
      if (request.mode === 'v1') request = { ...request, from_cursor: res.cursor };
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}
