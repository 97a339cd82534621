import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import {
  ContentFieldTypes,
  ContentSubjects,
  ConversationFieldInputDto,
  DomainError,
  ErrorCodes,
  FIELD_ID_PATTERN,
  DatetimeFieldInputDto,
  FileFieldInputDto,
  KeyValueFieldInputDto,
  KeywordsetFieldInputDto,
  LinkFieldInputDto,
  MessageInputDto,
  SeqIdDto,
  TextFieldInputDto,
  collectIssues,
  fieldBlobPrefix,
  type ContentFieldType,
  FieldRecord,
  type ValidationIssue,
  type FieldInputDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import type { AuthedRequest } from '../auth/auth.guard';
import { sendBlob } from '../http/blob-response';
import { bodyOf } from '../http/dto.pipe';
import { findArtefact } from '../http/extracted-artefacts';
import { actorOf, busContextOf, skipStoreOf } from '../http/request-context';
import { UploadService } from '../uploads/upload.service';

const BY = ['resource/:rid', 'slug/:rslug'];
const paths = (suffix: string) => BY.map((b) => `${b}/${suffix}`);
const refOf = (req: AuthedRequest) => (req.params['rid'] ? { rid: String(req.params['rid']) } : { slug: String(req.params['rslug']) });

function fieldType(raw: string): ContentFieldType {
  if (!(ContentFieldTypes as readonly string[]).includes(raw)) {
    throw DomainError.validation([
      { loc: ['path', 'field_type'], msg: `field_type must be one of ${ContentFieldTypes.join(', ')}`, type: 'enum' },
    ]);
  }
  return raw as ContentFieldType;
}

/** A field id from the path of a write (spec 2.4 pattern). */
function fieldIdOf(raw: string): string {
  if (raw.length > 250 || !FIELD_ID_PATTERN.test(raw)) {
    throw DomainError.validation([
      {
        loc: ['path', 'field_id'],
        msg: `field_id must match ${FIELD_ID_PATTERN.source} (at most 250 characters)`,
        type: 'string_pattern_mismatch',
      },
    ]);
  }
  return raw;
}

/** One field of a resource, by resource id or slug. */
@ApiTags('Fields')
@Controller('api/v1/kb/:kbid')
export class FieldsController {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly uploads: UploadService,
  ) {}

  @Put(paths('text/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a text field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putText(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(TextFieldInputDto)) body: TextFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'text', fieldId, body, req);
  }

  @Put(paths('link/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a link field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putLink(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(LinkFieldInputDto)) body: LinkFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'link', fieldId, body, req);
  }

  @Put(paths('conversation/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a conversation field' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putConversation(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(ConversationFieldInputDto)) body: ConversationFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'conversation', fieldId, body, req);
  }

  @Put(paths('key_value/:field_id'))
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add or replace a key_value field',
    description:
      "Values by key; when the KB has a key-value schema whose id is the field's id, the values follow it (422 at each value that does not).",
  })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putKeyValue(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(KeyValueFieldInputDto)) body: KeyValueFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'key_value', fieldId, body, req);
  }

  @Put(paths('keywordset/:field_id'))
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add or replace a keywordset field',
    description: 'Keywords `{keywords: [{value}]}`, each searched as a paragraph.',
  })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putKeywordset(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(KeywordsetFieldInputDto)) body: KeywordsetFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'keywordset', fieldId, body, req);
  }

  @Put(paths('datetime/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a datetime field', description: 'An ISO 8601 date-time `{value}` (422 when it is not one).' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  putDatetime(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(DatetimeFieldInputDto)) body: DatetimeFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.put(kbid, 'datetime', fieldId, body, req);
  }

  @Put(paths('file/:field_id'))
  @HttpCode(201)
  @ApiOperation({ summary: 'Add or replace a file field (base64 payload or by URI)' })
  @ApiResponse({ status: 201, type: SeqIdDto })
  async putFile(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body(bodyOf(FileFieldInputDto)) body: FileFieldInputDto,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    fieldIdOf(fieldId);
    if (body.file.payload === undefined) return this.put(kbid, 'file', fieldId, body, req);
    const found = await this.bus.request(ContentSubjects.resourceExists, { kbid, ...refOf(req) }, busContextOf(req));
    if (!found.exists || !found.rid) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const stored = await this.uploads.storeInlinePayload(
      kbid,
      found.rid,
      fieldId,
      body.file.payload,
      body.file.content_type,
      body.file.filename,
      skipStoreOf(req),
    );
    const { payload: _payload, ...file } = body.file;
    try {
      return await this.put(
        kbid,
        'file',
        fieldId,
        { ...body, file: { ...file, uri: stored.uri, content_type: stored.content_type, md5: stored.md5 } },
        req,
        stored.size,
      );
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
  appendMessages(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Body() body: unknown,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    if (!Array.isArray(body))
      throw DomainError.validation([{ loc: ['body'], msg: 'Input should be a valid list of messages', type: 'list_type' }]);
    const issues: ValidationIssue[] = body.flatMap((m, i) => collectIssues(MessageInputDto, m, { loc: ['body', i] }).issues);
    if (issues.length > 0) throw DomainError.validation(issues);
    return this.bus.request(
      ContentSubjects.appendMessages,
      { kbid, ...refOf(req), field_type: 'conversation', field_id: fieldId, actor: actorOf(req), messages: body },
      busContextOf(req),
    );
  }

  @Delete(paths('conversation/:field_id/messages/:message_ident'))
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one message of a conversation' })
  async deleteMessage(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Param('message_ident') ident: string,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(
      ContentSubjects.deleteMessage,
      { kbid, ...refOf(req), field_type: 'conversation', field_id: fieldId, ident, actor: actorOf(req) },
      busContextOf(req),
    );
  }

  @Get(paths(':field_type/:field_id'))
  @ApiOperation({ summary: 'Get one field (show=value|extracted|error, extracted=…, page=first|last|N for conversations)' })
  @ApiResponse({ status: 200, type: FieldRecord })
  getField(
    @Param('kbid') kbid: string,
    @Param('field_type') type: string,
    @Param('field_id') fieldId: string,
    @Query() q: Record<string, unknown>,
    @Req() req: AuthedRequest,
  ): Promise<FieldRecord> {
    const list = (v: unknown) =>
      v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter(Boolean);
    return this.bus.request(
      ContentSubjects.getField,
      {
        kbid,
        ...refOf(req),
        field_type: fieldType(type),
        field_id: fieldId,
        show: list(q['show']) as never,
        extracted: list(q['extracted']) as never,
        ...(typeof q['page'] === 'string' ? { page: q['page'] } : {}),
      },
      busContextOf(req),
    );
  }

  @Delete(paths(':field_type/:field_id'))
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one field (its blobs go too)' })
  async deleteField(
    @Param('kbid') kbid: string,
    @Param('field_type') type: string,
    @Param('field_id') fieldId: string,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(
      ContentSubjects.deleteField,
      { kbid, ...refOf(req), field_type: fieldType(type), field_id: fieldId, actor: actorOf(req) },
      busContextOf(req),
    );
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
  reprocessField(
    @Param('kbid') kbid: string,
    @Param('field_type') type: string,
    @Param('field_id') fieldId: string,
    @Req() req: AuthedRequest,
  ): Promise<SeqIdDto> {
    return this.bus.request(
      ContentSubjects.reprocessResource,
      { kbid, ...refOf(req), field_type: fieldType(type), field_id: fieldId, actor: actorOf(req) },
      busContextOf(req),
    );
  }

  @Get(paths('file/:field_id/download/field'))
  @ApiOperation({ summary: 'Download the original file of a field (Range supported; inline=true to display)' })
  @ApiQuery({
    name: 'inline',
    required: false,
    enum: ['true', 'false'],
    description: 'true: `Content-Disposition: inline` (types a browser may display)',
  })
  async download(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Query('inline') inline: string | undefined,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    const field = await this.bus.request(
      ContentSubjects.getField,
      { kbid, ...refOf(req), field_type: 'file', field_id: fieldId, show: ['value'] },
      busContextOf(req),
    );
    const file = (field.value?.['file'] ?? {}) as { uri?: string; filename?: string; content_type?: string };
    if (!file.uri)
      throw new DomainError(
        ErrorCodes.NOT_FOUND,
        'The original file of this field was not kept (sent with x-skip-store): only its extracted data is stored',
      );
    if (!file.uri.startsWith('blob:'))
      throw new DomainError(ErrorCodes.NOT_FOUND, 'This file field points to an external address; nothing is stored to download');
    await sendBlob(this.blobs, req, res, {
      key: file.uri.slice('blob:'.length),
      filename: file.filename ?? fieldId,
      contentType: file.content_type,
      inline: inline === 'true',
    });
  }

  @Get(paths(':field_type/:field_id/download/extracted/*download_field'))
  @ApiOperation({ summary: 'Download a file processing extracted from a field: thumbnail, previews, generated files (Range supported)' })
  @ApiQuery({
    name: 'inline',
    required: false,
    enum: ['true', 'false'],
    description: 'true: `Content-Disposition: inline` (types a browser may display)',
  })
  async downloadExtracted(
    @Param('kbid') kbid: string,
    @Param('field_type') type: string,
    @Param('field_id') fieldId: string,
    @Param('download_field') downloadField: string | string[],
    @Query('inline') inline: string | undefined,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    const ftype = fieldType(type);
    const name = Array.isArray(downloadField) ? downloadField.join('/') : String(downloadField);
    const ref = refOf(req);
    const rid = ref.rid ?? (await this.bus.request(ContentSubjects.resourceExists, { kbid, ...ref }, busContextOf(req))).rid;
    if (!rid) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const field = await this.bus.request(
      ContentSubjects.getField,
      { kbid, rid, field_type: ftype, field_id: fieldId, show: ['extracted'], extracted: ['metadata', 'file', 'link'] },
      busContextOf(req),
    );
    const artefact = findArtefact(field.extracted, fieldBlobPrefix({ kbid, rid, field_type: ftype, field_id: fieldId }), name);
    if (!artefact) throw new DomainError(ErrorCodes.NOT_FOUND, `Field ${ftype}/${fieldId} has no extracted file named "${name}"`);
    const filename = artefact.filename ?? name.split('/').pop() ?? name;
    await sendBlob(this.blobs, req, res, { key: artefact.key, filename, contentType: artefact.content_type, inline: inline === 'true' });
  }

  /** `fileSize`: the bytes of an inline file this edge stored for the field. */
  private put(
    kbid: string,
    type: ContentFieldType,
    fieldId: string,
    value: FieldInputDto,
    req: AuthedRequest,
    fileSize?: number,
  ): Promise<SeqIdDto> {
    const skip = type === 'file' && skipStoreOf(req) ? { skip_store: true } : {};
    return this.bus.request(
      ContentSubjects.putField,
      {
        kbid,
        ...refOf(req),
        field_type: type,
        field_id: fieldIdOf(fieldId),
        value,
        actor: actorOf(req),
        ...skip,
        ...(fileSize !== undefined ? { file_size: fileSize } : {}),
      },
      busContextOf(req),
    );
  }
}
