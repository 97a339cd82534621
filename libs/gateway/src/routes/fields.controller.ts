import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ContentFieldTypes, ContentSubjects, ConversationFieldInputDto, DomainError, ErrorCodes, FileFieldInputDto, LinkFieldInputDto, MessageInputDto,
  SeqIdDto, TextFieldInputDto, collectIssues, type ContentFieldType, type FieldRecord, type ValidationIssue,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { actorOf, busContextOf, skipStoreOf } from '../http/request-context';
import { UploadService } from '../uploads/upload.service';

const BY = ['resource/:rid', 'slug/:rslug'];
const paths = (suffix: string) => BY.map((b) => `${b}/${suffix}`);
const refOf = (req: AuthedRequest) => (req.params['rid'] ? { rid: String(req.params['rid']) } : { slug: String(req.params['rslug']) });

function fieldType(raw: string): ContentFieldType {
  if (!(ContentFieldTypes as readonly string[]).includes(raw)) {
    throw DomainError.validation([{ loc: ['path', 'field_type'], msg: `field_type must be one of ${ContentFieldTypes.join(', ')}`, type: 'enum' }]);
  }
  return raw as ContentFieldType;
}

/** One field of a resource, by resource id or slug. */
@ApiTags('Fields')
@Controller('api/v1/kb/:kbid')
export class FieldsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus, @Inject(BLOB_STORE) private readonly blobs: BlobStore, private readonly uploads: UploadService) {}

  @Put(paths('text/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a text field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putText(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Body(bodyOf(TextFieldInputDto)) body: TextFieldInputDto, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    return this.put(kbid, 'text', fieldId, body as unknown as Record<string, unknown>, req);
  }

  @Put(paths('link/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a link field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putLink(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Body(bodyOf(LinkFieldInputDto)) body: LinkFieldInputDto, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    return this.put(kbid, 'link', fieldId, body as unknown as Record<string, unknown>, req);
  }

  @Put(paths('conversation/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a conversation field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putConversation(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Body(bodyOf(ConversationFieldInputDto)) body: ConversationFieldInputDto, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    return this.put(kbid, 'conversation', fieldId, body as unknown as Record<string, unknown>, req);
  }

  @Put(paths('file/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a file field (base64 payload or by URI)' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  async putFile(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Body(bodyOf(FileFieldInputDto)) body: FileFieldInputDto, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    if (body.file.payload === undefined) return this.put(kbid, 'file', fieldId, body as unknown as Record<string, unknown>, req);
    const found = await this.bus.request(ContentSubjects.resourceExists, { kbid, ...refOf(req) }, busContextOf(req));
    if (!found.exists || !found.rid) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const stored = await this.uploads.storeInlinePayload(kbid, found.rid, fieldId, body.file.payload, body.file.content_type, body.file.filename, skipStoreOf(req));
    const { payload: _payload, ...file } = body.file;
    try {
      return await this.put(kbid, 'file', fieldId, { ...body, file: { ...file, uri: stored.uri, content_type: stored.content_type, md5: stored.md5 } }, req);
    } catch (err) {
      await this.uploads.discard(stored.uri.slice('blob:'.length));
      throw err;
    }
  }

  @Put(paths('conversation/:field_id/messages'))
  @HttpCode(200)
  @ApiOperation({ summary: 'Append messages to a conversation' })
  @ApiBody({ type: [MessageInputDto] })
  @ApiResponse({ status: 200, type: SeqIdDto })
  appendMessages(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    if (!Array.isArray(body)) throw DomainError.validation([{ loc: ['body'], msg: 'Input should be a valid list of messages', type: 'list_type' }]);
    const issues: ValidationIssue[] = body.flatMap((m, i) => collectIssues(MessageInputDto, m, { loc: ['body', i] }).issues);
    if (issues.length > 0) throw DomainError.validation(issues);
    return this.bus.request(ContentSubjects.appendMessages, { kbid, ...refOf(req), field_type: 'conversation', field_id: fieldId, actor: actorOf(req), messages: body }, busContextOf(req));
  }

  @Delete(paths('conversation/:field_id/messages/:message_ident'))
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one message of a conversation' })
  async deleteMessage(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Param('message_ident') ident: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteMessage, { kbid, ...refOf(req), field_type: 'conversation', field_id: fieldId, ident, actor: actorOf(req) }, busContextOf(req));
  }

  @Get(paths(':field_type/:field_id'))
  @ApiOperation({ summary: 'Get one field (show=value|extracted|error, extracted=…, page=first|last|N for conversations)' })
  getField(@Param('kbid') kbid: string, @Param('field_type') type: string, @Param('field_id') fieldId: string, @Query() q: Record<string, unknown>, @Req() req: AuthedRequest): Promise<FieldRecord> {
    const list = (v: unknown) => (v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter(Boolean));
    return this.bus.request(ContentSubjects.getField, {
      kbid, ...refOf(req), field_type: fieldType(type), field_id: fieldId, show: list(q['show']) as never, extracted: list(q['extracted']) as never,
      ...(typeof q['page'] === 'string' ? { page: q['page'] } : {}),
    }, busContextOf(req));
  }

  @Delete(paths(':field_type/:field_id'))
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one field (its blobs go too)' })
  async deleteField(@Param('kbid') kbid: string, @Param('field_type') type: string, @Param('field_id') fieldId: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteField, { kbid, ...refOf(req), field_type: fieldType(type), field_id: fieldId, actor: actorOf(req) }, busContextOf(req));
  }

  @Post(paths('reprocess'))
  @HttpCode(202)
  @ApiOperation({ summary: 'Reprocess resource' })
  @ApiResponse({ status: 202, type: SeqIdDto })
  reprocess(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    return this.bus.request(ContentSubjects.reprocessResource, { kbid, ...refOf(req), actor: actorOf(req) }, busContextOf(req));
  }

  @Post(paths(':field_type/:field_id/reprocess'))
  @HttpCode(202)
  @ApiOperation({ summary: 'Reprocess one field' })
  @ApiResponse({ status: 202, type: SeqIdDto })
  reprocessField(@Param('kbid') kbid: string, @Param('field_type') type: string, @Param('field_id') fieldId: string, @Req() req: AuthedRequest): Promise<SeqIdDto> {
    return this.bus.request(ContentSubjects.reprocessResource, { kbid, ...refOf(req), field_type: fieldType(type), field_id: fieldId, actor: actorOf(req) }, busContextOf(req));
  }

  @Get(paths('file/:field_id/download/field'))
  @ApiOperation({ summary: 'Download the original file of a field (Range supported; inline=true to display)' })
  async download(@Param('kbid') kbid: string, @Param('field_id') fieldId: string, @Query('inline') inline: string | undefined, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const field = await this.bus.request(ContentSubjects.getField, { kbid, ...refOf(req), field_type: 'file', field_id: fieldId, show: ['value'] }, busContextOf(req));
    const file = (field.value?.['file'] ?? {}) as { uri?: string; filename?: string; content_type?: string };
    if (!file.uri?.startsWith('blob:')) throw new DomainError(ErrorCodes.NOT_FOUND, 'This file field points to an external address; nothing is stored to download');
    const key = file.uri.slice('blob:'.length);
    let range = parseRange(req.headers.range);
    if (range && range.start < 0) {
      // A suffix range (last n bytes) needs the size first.
      const size = (await this.blobs.stat(key))?.size ?? 0;
      range = { start: Math.max(0, size + range.start) };
    }
    const blob = await this.blobs.get(key, range ? { range } : {});
    const name = (file.filename ?? fieldId).replace(/["\\\r\n]/g, '_');
    res.setHeader('Content-Type', file.content_type ?? blob.stat.contentType);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Disposition', `${inline === 'true' ? 'inline' : 'attachment'}; filename="${name}"; filename*=UTF-8''${encodeURIComponent(file.filename ?? fieldId)}`);
    if (blob.range) {
      res.status(206).setHeader('Content-Range', `bytes ${blob.range.start}-${blob.range.end}/${blob.stat.size}`);
      res.setHeader('Content-Length', String(blob.range.end - blob.range.start + 1));
    } else {
      res.status(200).setHeader('Content-Length', String(blob.stat.size));
    }
    blob.body.on('error', () => res.destroy());
    blob.body.pipe(res);
  }

  private put(kbid: string, type: ContentFieldType, fieldId: string, value: Record<string, unknown>, req: AuthedRequest): Promise<SeqIdDto> {
    const skip = type === 'file' && skipStoreOf(req) ? { skip_store: true } : {};
    return this.bus.request(ContentSubjects.putField, { kbid, ...refOf(req), field_type: type, field_id: fieldId, value, actor: actorOf(req), ...skip }, busContextOf(req));
  }
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n`; anything else (or several ranges) is ignored as HTTP allows. */
function parseRange(header: string | undefined): { start: number; end?: number } | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') return { start: -Number(m[2]) };
  return { start: Number(m[1]), ...(m[2] !== '' ? { end: Number(m[2]) } : {}) };
}
