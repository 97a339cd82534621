import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  ContentSubjects,
  CreateEntitiesGroupDto,
  DomainError,
  EntitiesGroupDto,
  KnowledgeBoxEntitiesDto,
  UpdateEntitiesGroupDto,
  EMPTY_OBJECT_SCHEMA,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/** Entities groups of a KB (API-MAP 3 "Entities groups"; docs/decisions/0018). */
@ApiTags('Entities')
@Controller('api/v1/kb/:kbid')
export class EntitiesGroupsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('entitiesgroups')
  @ApiOperation({
    summary: 'Get Knowledge Box Entities',
    description: 'Every entities group (custom ones and those processing found), without their entities: read those per group.',
  })
  @ApiQuery({
    name: 'show_entities',
    required: false,
    type: Boolean,
    description: 'Only false is accepted (the reference refuses true as well)',
  })
  @ApiResponse({ status: 200, type: KnowledgeBoxEntitiesDto })
  list(
    @Param('kbid') kbid: string,
    @Query('show_entities') showEntities: string | undefined,
    @Req() req: AuthedRequest,
  ): Promise<KnowledgeBoxEntitiesDto> {
    if (showEntities !== undefined && showEntities !== 'false') {
      throw DomainError.validation([
        {
          loc: ['query', 'show_entities'],
          msg: 'show_entities is not supported: read each group with /entitiesgroup/{group}',
          type: 'value_error',
        },
      ]);
    }
    return this.bus.request(ContentSubjects.listEntitiesGroups, { kbid }, busContextOf(req));
  }

  @Get('entitiesgroup/:group')
  @ApiOperation({
    summary: 'Get a Knowledge Box Entities Group',
    description: 'Stored entities and those processing found in the KB (at most 2000).',
  })
  @ApiResponse({ status: 200, type: EntitiesGroupDto })
  @ApiResponse({ status: 404, description: 'No such group' })
  get(@Param('kbid') kbid: string, @Param('group') group: string, @Req() req: AuthedRequest): Promise<EntitiesGroupDto> {
    return this.bus.request(ContentSubjects.getEntitiesGroup, { kbid, group }, busContextOf(req));
  }

  @Post('entitiesgroups')
  @HttpCode(200)
  @ApiOperation({ summary: 'Create Knowledge Box Entities Group' })
  @ApiResponse({ status: 200, description: 'Created: an empty object', schema: EMPTY_OBJECT_SCHEMA })
  @ApiResponse({ status: 409, description: 'The group exists (custom or found by processing)' })
  async create(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CreateEntitiesGroupDto)) body: CreateEntitiesGroupDto,
    @Req() req: AuthedRequest,
  ): Promise<Record<string, never>> {
    return this.bus.request(ContentSubjects.createEntitiesGroup, { kbid, body }, busContextOf(req));
  }

  @Patch('entitiesgroup/:group')
  @ApiOperation({
    summary: 'Update Knowledge Box Entities Group',
    description: 'Title, colour; entities to add, update and delete (deleting an entity processing found hides it).',
  })
  @ApiResponse({ status: 200, description: 'Updated: an empty object', schema: EMPTY_OBJECT_SCHEMA })
  @ApiResponse({ status: 404, description: 'No such group' })
  update(
    @Param('kbid') kbid: string,
    @Param('group') group: string,
    @Body(bodyOf(UpdateEntitiesGroupDto)) body: UpdateEntitiesGroupDto,
    @Req() req: AuthedRequest,
  ): Promise<Record<string, never>> {
    return this.bus.request(ContentSubjects.updateEntitiesGroup, { kbid, group, body }, busContextOf(req));
  }

  @Delete('entitiesgroup/:group')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete Knowledge Box Entities Group',
    description: 'A group processing found stays hidden until it is created again.',
  })
  @ApiResponse({ status: 200, description: 'Deleted: an empty object', schema: EMPTY_OBJECT_SCHEMA })
  @ApiResponse({ status: 404, description: 'No such group' })
  delete(@Param('kbid') kbid: string, @Param('group') group: string, @Req() req: AuthedRequest): Promise<Record<string, never>> {
    return this.bus.request(ContentSubjects.deleteEntitiesGroup, { kbid, group }, busContextOf(req));
  }
}
