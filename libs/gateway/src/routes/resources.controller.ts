import { Body, Controller, Delete, Get, Head, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import {
  ContentSubjects,
  CreateResourceDto,
  DomainError,
  ErrorCodes,
  ExtractedOptions,
  FieldTypes,
  ModifyResourceDto,
  ResourceCreatedDto,
  ResourceDto,
  ResourceListDto,
  SeqIdDto,
  ShowOptions,
  type ExtractedOption,
  type FieldType,
  type ShowOption,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf, queryOf } from '../http/dto.pipe';
import { QueryArray, QueryBool, QueryInt } from '../http/query-transforms';
import { actorOf, busContextOf, skipStoreOf } from '../http/request-context';
import { UploadService } from '../uploads/upload.service';
import { randomUUID } from 'node:crypto';

export class GetResourceQuery {
  @ApiPropertyOptional({
    enum: ShowOptions,
    isArray: true,
    description: 'What to serialize (repeat the parameter or separate with commas).',
  })
  @IsOptional()
  @QueryArray()
  @IsArray()
  @ArrayUnique()
  @IsIn(ShowOptions, { each: true })
  show?: ShowOption[];
  @ApiPropertyOptional({ enum: FieldTypes, isArray: true, description: 'Field types to serialize.' })
  @IsOptional()
  @QueryArray()
  @IsArray()
  @ArrayUnique()
  @IsIn(FieldTypes, { each: true })
  field_type?: FieldType[];
  @ApiPropertyOptional({ enum: ExtractedOptions, isArray: true, description: 'Extracted data to serialize (with show=extracted).' })
  @IsOptional()
  @QueryArray()
  @IsArray()
  @ArrayUnique()
  @IsIn(ExtractedOptions, { each: true })
  extracted?: ExtractedOption[];
}

export class ReindexQuery {
  @ApiPropertyOptional({ description: 'Also recompute the vectors.' }) @IsOptional() @QueryBool() @IsBoolean() reindex_vectors?: boolean;
}

export class ListResourcesQuery {
  @ApiPropertyOptional({ minimum: 0, maximum: 100000, default: 0 }) @IsOptional() @QueryInt() @IsInt() @Min(0) @Max(100000) page?: number;
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 20 }) @IsOptional() @QueryInt() @IsInt() @Min(1) @Max(200) size?: number;
  @ApiPropertyOptional({ description: 'Include hidden resources.' }) @IsOptional() @QueryBool() @IsBoolean() show_hidden?: boolean;
}

/** Resource routes by id and by slug: thin adapters onto the content service. */
@ApiTags('Resources')
@ApiHeader({ name: 'x-svcdb-user', required: false, description: 'User id recorded in the activity log' })
@Controller('api/v1/kb/:kbid')
export class ResourcesController {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly uploads: UploadService,
  ) {}

  @Post('resources')
  @ApiOperation({ summary: 'Create Resource' })
  @ApiHeader({ name: 'x-synchronous', required: false, description: 'Accepted for compatibility; every write is synchronous' })
  @ApiHeader({ name: 'x-skip-store', required: false, description: 'true: file fields go to processing and are not kept' })
  @ApiResponse({ status: 201, type: ResourceCreatedDto })
  async create(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CreateResourceDto)) body: CreateResourceDto,
    @Req() req: AuthedRequest,
  ): Promise<ResourceCreatedDto> {
    // Inline file bytes go to the blob store first, under the id the resource will have.
    const rid = randomUUID();
    const skip = skipStoreOf(req);
    const staged = await this.uploads.stageInlineFiles(kbid, rid, body.files, skip);
    try {
      return await this.bus.request(
        ContentSubjects.createResource,
        {
          kbid,
          rid,
          actor: actorOf(req),
          ...(skip ? { skip_store: true } : {}),
          file_sizes: staged.sizes,
          body: { ...body, files: staged.files },
        },
        busContextOf(req),
      );
    } catch (err) {
      if (staged.keys.length > 0) await this.uploads.discard(`content/kbs/${kbid}/r/${rid}/`);
      throw err;
    }
  }

  @Get('resources')
  @ApiOperation({ summary: 'List Resources' })
  @ApiResponse({ status: 200, type: ResourceListDto })
  list(
    @Param('kbid') kbid: string,
    @Query(queryOf(ListResourcesQuery)) q: ListResourcesQuery,
    @Req() req: AuthedRequest,
  ): Promise<ResourceListDto> {
    return this.bus.request(
      ContentSubjects.listResources,
      { kbid, page: q.page, size: q.size, show_hidden: q.show_hidden },
      busContextOf(req),
    );
  }

  @Get('resource/:rid')
  @ApiOperation({ summary: 'Get Resource (by id)' })
  @ApiResponse({ status: 200, type: ResourceDto })
  get(
    @Param('kbid') kbid: string,
    @Param('rid') rid: string,
    @Query(queryOf(GetResourceQuery)) q: GetResourceQuery,
    @Req() req: AuthedRequest,
  ): Promise<ResourceDto> {
    return this.bus.request(ContentSubjects.getResource, { kbid, rid, ...q, actor: actorOf(req) }, busContextOf(req));
  }

  @Get('slug/:rslug')
  @ApiOperation({ summary: 'Get Resource (by slug)' })
  @ApiResponse({ status: 200, type: ResourceDto })
  getBySlug(
    @Param('kbid') kbid: string,
    @Param('rslug') slug: string,
    @Query(queryOf(GetResourceQuery)) q: GetResourceQuery,
    @Req() req: AuthedRequest,
  ): Promise<ResourceDto> {
    return this.bus.request(ContentSubjects.getResource, { kbid, slug, ...q, actor: actorOf(req) }, busContextOf(req));
  }

  @Head('resource/:rid')
  @ApiOperation({ summary: 'Resource exists (by id)' })
  async head(@Param('kbid') kbid: string, @Param('rid') rid: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const { exists } = await this.bus.request(ContentSubjects.resourceExists, { kbid, rid }, busContextOf(req));
    res.status(exists ? 200 : 404).end();
  }

  @Head('slug/:rslug')
  @ApiOperation({ summary: 'Resource exists (by slug)' })
  async headBySlug(
    @Param('kbid') kbid: string,
    @Param('rslug') slug: string,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    const { exists } = await this.bus.request(ContentSubjects.resourceExists, { kbid, slug }, busContextOf(req));
    res.status(exists ? 200 : 404).end();
  }

  @Patch('resource/:rid')
  @ApiOperation({ summary: 'Modify Resource (by id)' })
  @ApiHeader({ name: 'x-skip-store', required: false, description: 'true: file fields go to processing and are not kept' })
  @ApiResponse({ status: 200, type: SeqIdDto })
  modify(
    @Param('kbid') kbid: string,
    @Param('rid') rid: string,
    @Body(bodyOf(ModifyResourceDto)) body: ModifyResourceDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.modifyWithFiles(kbid, { rid }, body, req);
  }

  @Patch('slug/:rslug')
  @ApiOperation({ summary: 'Modify Resource (by slug)' })
  @ApiHeader({ name: 'x-skip-store', required: false, description: 'true: file fields go to processing and are not kept' })
  @ApiResponse({ status: 200, type: SeqIdDto })
  modifyBySlug(
    @Param('kbid') kbid: string,
    @Param('rslug') slug: string,
    @Body(bodyOf(ModifyResourceDto)) body: ModifyResourceDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.modifyWithFiles(kbid, { slug }, body, req);
  }

  private async modifyWithFiles(
    kbid: string,
    ref: { rid?: string; slug?: string },
    body: ModifyResourceDto,
    req: AuthedRequest,
  ): Promise<SeqIdDto> {
    const hasInline = Object.values(body.files ?? {}).some((f) => f.file.payload !== undefined);
    const skip = skipStoreOf(req);
    if (!hasInline)
      return this.bus.request(
        ContentSubjects.modifyResource,
        { kbid, ...ref, actor: actorOf(req), skip_store: skip, body },
        busContextOf(req),
      );
    const found = await this.bus.request(ContentSubjects.resourceExists, { kbid, ...ref }, busContextOf(req));
    if (!found.exists || !found.rid) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const staged = await this.uploads.stageInlineFiles(kbid, found.rid, body.files, skip);
    try {
      return await this.bus.request(
        ContentSubjects.modifyResource,
        { kbid, rid: found.rid, actor: actorOf(req), skip_store: skip, file_sizes: staged.sizes, body: { ...body, files: staged.files } },
        busContextOf(req),
      );
    } catch (err) {
      for (const key of staged.keys) await this.uploads.discard(key);
      throw err;
    }
  }

  @Post(['resource/:rid/reindex', 'slug/:rslug/reindex'])
  @HttpCode(204)
  @ApiOperation({ summary: 'Reindex Resource: rebuild its search index rows; reindex_vectors=true also processes every field again' })
  @ApiResponse({ status: 204 })
  async reindex(@Param('kbid') kbid: string, @Query(queryOf(ReindexQuery)) q: ReindexQuery, @Req() req: AuthedRequest): Promise<void> {
    const ref = req.params['rid'] ? { rid: String(req.params['rid']) } : { slug: String(req.params['rslug']) };
    await this.bus.request(
      ContentSubjects.reindexResource,
      { kbid, ...ref, reindex_vectors: q.reindex_vectors ?? false, actor: actorOf(req) },
      busContextOf(req),
    );
  }

  @Delete('resource/:rid')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Resource (by id)' })
  @ApiResponse({ status: 204 })
  async delete(@Param('kbid') kbid: string, @Param('rid') rid: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteResource, { kbid, rid, actor: actorOf(req) }, busContextOf(req));
  }

  @Delete('slug/:rslug')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete Resource (by slug)' })
  @ApiResponse({ status: 204 })
  async deleteBySlug(@Param('kbid') kbid: string, @Param('rslug') slug: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteResource, { kbid, slug, actor: actorOf(req) }, busContextOf(req));
  }
}
