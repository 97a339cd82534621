import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  ContentSubjects,
  CreateStandaloneKnowledgeBoxDto,
  DomainError,
  KB_SLUG_PATTERN,
  KbCountersDto,
  KbIdentityDto,
  ModifyKnowledgeBoxDto,
  StandaloneKbListDto,
  StandaloneKnowledgeBoxDto,
  type KbCaller,
  type KnowledgeBoxDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/** The caller as the guard resolved it: a user, or the one KB (and role) of an API key. */
function callerOf(req: AuthedRequest): KbCaller {
  const p = req.principal;
  return p?.user_id ? { user_id: p.user_id } : { kb_id: p?.kb_id, key_role: p?.key_role };
}

const withUuid = (kb: KnowledgeBoxDto): StandaloneKnowledgeBoxDto => ({ ...kb, uuid: kb.id });

/**
 * The standalone KB paths of the reference system (API-MAP 1.4, "NucliaDB standalone equivalents of
 * KB CRUD"), which name no account. Registered before the `/kb/{kbid}/…` routes so that
 * `/kb/s/{slug}` is never read as a KB id `s`.
 */
@ApiTags('Knowledge Boxes')
@Controller('api/v1')
export class KbsStandaloneController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('kbs')
  @ApiOperation({
    summary: 'Create Knowledge Box (standalone path)',
    description:
      'Creates the KB in the account named by `account_id` (id or slug; you must own it), or, without it, in the one account you own. Without `account_id`, owning no account or several is a 422 asking for it.',
  })
  @ApiResponse({ status: 201, type: KbIdentityDto })
  create(
    @Body(bodyOf(CreateStandaloneKnowledgeBoxDto)) body: CreateStandaloneKnowledgeBoxDto,
    @Req() req: AuthedRequest,
  ): Promise<KbIdentityDto> {
    return this.bus.request(AccountsSubjects.createKbForCaller, { user_id: req.principal?.user_id ?? '', body }, busContextOf(req));
  }

  @Get('kbs')
  @ApiOperation({
    summary: 'List Knowledge Boxes (standalone path)',
    description: "A user's KBs in every account they are in (all KBs of the accounts they own); an API key's one KB.",
  })
  @ApiResponse({ status: 200, type: StandaloneKbListDto })
  list(@Req() req: AuthedRequest): Promise<StandaloneKbListDto> {
    return this.bus.request(AccountsSubjects.listCallerKbs, callerOf(req), busContextOf(req));
  }

  @Get('kb/s/:slug')
  @ApiOperation({
    summary: 'Get Knowledge Box by slug',
    description: 'Looks the slug up only among the KBs you can see; 409 when two of them (in different accounts) share it.',
  })
  @ApiResponse({ status: 200, type: StandaloneKnowledgeBoxDto })
  async bySlug(@Param('slug') slug: string, @Req() req: AuthedRequest): Promise<StandaloneKnowledgeBoxDto> {
    // No KB can have such a slug: say what is wrong with it rather than searching.
    if (slug.length > 250 || !KB_SLUG_PATTERN.test(slug)) {
      throw DomainError.validation([
        {
          loc: ['path', 'slug'],
          msg: `A Knowledge Box slug has at most 250 characters matching ${KB_SLUG_PATTERN.source}`,
          type: 'string_pattern_mismatch',
        },
      ]);
    }
    return withUuid(await this.bus.request(AccountsSubjects.getKbBySlug, { ...callerOf(req), slug }, busContextOf(req)));
  }

  @Get('kb/:kbid')
  @ApiOperation({ summary: 'Get Knowledge Box' })
  @ApiResponse({ status: 200, type: StandaloneKnowledgeBoxDto })
  async get(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<StandaloneKnowledgeBoxDto> {
    return withUuid(
      await this.bus.request(
        AccountsSubjects.getKb,
        { account_id: req.grant?.account_id ?? '', kb_id: kbid, caller_role: req.grant?.kb_role },
        busContextOf(req),
      ),
    );
  }

  @Patch('kb/:kbid')
  @ApiOperation({ summary: 'Modify Knowledge Box' })
  @ApiResponse({ status: 200, type: KbIdentityDto })
  async modify(
    @Param('kbid') kbid: string,
    @Body(bodyOf(ModifyKnowledgeBoxDto)) body: ModifyKnowledgeBoxDto,
    @Req() req: AuthedRequest,
  ): Promise<KbIdentityDto> {
    const ref = { account_id: req.grant?.account_id ?? '', kb_id: kbid };
    await this.bus.request(AccountsSubjects.modifyKb, { ...ref, body }, busContextOf(req));
    const kb = await this.bus.request(AccountsSubjects.getKb, ref, busContextOf(req));
    return { uuid: kb.id, slug: kb.slug };
  }

  @Delete('kb/:kbid')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Knowledge Box (its resources, vectors and blobs go too)' })
  @ApiResponse({ status: 204 })
  async delete(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteKb, { account_id: req.grant?.account_id ?? '', kb_id: kbid }, busContextOf(req));
  }

  @Get('kb/:kbid/counters')
  @ApiOperation({
    summary: 'Knowledge Box counters',
    description: 'Resources, fields, indexed paragraphs, paragraphs with vectors (`sentences`) and the bytes of the index rows.',
  })
  @ApiResponse({ status: 200, type: KbCountersDto })
  counters(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbCountersDto> {
    return this.bus.request(ContentSubjects.kbCounters, { kbid }, busContextOf(req));
  }
}
