import { Inject, Injectable } from '@nestjs/common';
import type { ClassConstructor } from 'class-transformer';
import type { DataSource, EntityManager } from 'typeorm';
import {
  ConversationFieldInputDto,
  DomainError,
  ErrorCodes,
  FileFieldInputDto,
  DatetimeFieldInputDto,
  KeyValueFieldInputDto,
  KeywordsetFieldInputDto,
  LinkFieldInputDto,
  TextFieldInputDto,
  validatePayload,
  type AppendMessagesRequest,
  type ContentFieldType,
  type DeleteFieldRequest,
  type DeleteMessageRequest,
  type FieldRecord,
  type GetFieldRequest,
  type Md5Request,
  type PutFieldRequest,
  type RegisterUploadRequest,
  type ReprocessRequest,
  type SeqIdDto,
} from '@kb/contracts';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import { OutboxService } from '../outbox/outbox.service';
import { fieldWritesOf, keepStoredSecrets, publicFieldValue, writesCarryMask } from './field-values';
import { deriveResourceStatus } from './resource-status';
import { ResourcesRepository } from './resources.repository';
import { ResourcesService } from './resources.service';
import { auditEntry, pendingFieldRows, processingJobs } from './write-effects';
import { heldBytes, keepMeasuredSizes, supersededFiles, writtenBytes } from './held-bytes';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { attachmentIssues, isReleased, prepareFileWrites, supersededUnstored } from './unstored-files';
import { KbNotifier } from '../notifications/kb-notifier.service';
import { SearchIndexerService } from '../search/index/search-indexer.service';

const INPUT: Record<
  ContentFieldType,
  { cls: ClassConstructor<object>; map: 'texts' | 'links' | 'files' | 'conversations' | 'key_values' | 'keywordsets' | 'datetimes' }
> = {
  text: { cls: TextFieldInputDto, map: 'texts' },
  link: { cls: LinkFieldInputDto, map: 'links' },
  file: { cls: FileFieldInputDto, map: 'files' },
  conversation: { cls: ConversationFieldInputDto, map: 'conversations' },
  key_value: { cls: KeyValueFieldInputDto, map: 'key_values' },
  keywordset: { cls: KeywordsetFieldInputDto, map: 'keywordsets' },
  datetime: { cls: DatetimeFieldInputDto, map: 'datetimes' },
};
const MESSAGES_PER_PAGE = 50;
const MAX_MESSAGES = 51_200;

/** One field at a time: set, read, delete, conversation messages, reprocessing, uploaded files. */
@Injectable()
export class FieldsService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly repo: ResourcesRepository,
    private readonly outbox: OutboxService,
    private readonly resources: ResourcesService,
    private readonly indexer: SearchIndexerService,
    private readonly notifier: KbNotifier,
    private readonly configs: KbConfigsService,
  ) {}

  async put(req: PutFieldRequest): Promise<SeqIdDto> {
    const input = validatePayload(INPUT[req.field_type].cls, req.value, { loc: ['body'] });
    const writes = fieldWritesOf({ [INPUT[req.field_type].map]: { [req.field_id]: input } }, new Date().toISOString());
    // The size of inline bytes the edge stored for this file (what storage_bytes counts).
    if (req.field_type === 'file' && req.file_size !== undefined)
      writes.forEach((w) => ((w.value['file'] as Record<string, unknown>)['size'] = req.file_size));
    await this.configs.assertFieldStrategies(req.kbid, writes, () => ['body']);
    await this.configs.checkKeyValues(req.kbid, writes, () => ['body']);
    return this.write(req, 'modified', req.actor, async (m, resource, seqid, now) => {
      const kept = writesCarryMask(writes) ? keepStoredSecrets(writes, await this.repo.fieldsOf(resource.id, m)) : writes;
      return pendingFieldRows(
        resource,
        prepareFileWrites(resource, kept, req.skip_store, () => ['body']),
        seqid,
        now,
      );
    });
  }

  async get(req: GetFieldRequest): Promise<FieldRecord> {
    const resource = await this.find(req);
    const field = await this.repo.findField(resource.id, req.field_type, req.field_id);
    if (!field) throw new DomainError(ErrorCodes.FIELD_NOT_FOUND, 'Field not found');
    const show = req.show && req.show.length > 0 ? req.show : ['value', 'extracted', 'error'];
    const out: FieldRecord & { value?: Record<string, unknown> | null } = { status: field.status };
    if (show.includes('value')) {
      out.value =
        field.fieldType === 'conversation' ? this.conversationPage(field.value, req.page) : publicFieldValue(field.fieldType, field.value);
    }
    if (show.includes('extracted') && field.extracted) {
      const wanted = req.extracted && req.extracted.length > 0 ? req.extracted : ['text', 'metadata', 'link', 'file'];
      out.extracted = Object.fromEntries(Object.entries(field.extracted).filter(([k]) => (wanted as string[]).includes(k)));
    }
    if (show.includes('error')) {
      out.error = field.error;
      out.errors = field.errors;
    }
    return out;
  }

  async delete(req: DeleteFieldRequest): Promise<Record<string, never>> {
    const started = Date.now();
    const rows = await this.ds.transaction(async (m) => {
      const resource = await this.repo.lockByRef(m, req);
      const field = await this.repo.findField(resource.id, req.field_type, req.field_id, m);
      if (!field) throw new DomainError(ErrorCodes.FIELD_NOT_FOUND, 'Field not found');
      await m.delete(FieldEntity, { rid: resource.id, fieldType: req.field_type, fieldId: req.field_id });
      await this.indexer.unindexField(m, req.kbid, resource.id, req.field_type, req.field_id);
      await this.refreshStatus(m, resource, await this.repo.nextSeqid(m));
      return this.outbox.add(m, [
        { kind: 'blob_cleanup', target: `content/kbs/${req.kbid}/r/${resource.id}/f/${req.field_type}/${req.field_id}/` },
        auditEntry(req.kbid, 'modified', resource.id, req.actor, started, -heldBytes([field])),
      ]);
    });
    this.outbox.relayInBackground(rows);
    return {};
  }

  async appendMessages(req: AppendMessagesRequest): Promise<SeqIdDto> {
    return this.write(req, 'modified', req.actor, async (m, resource, seqid, now) => {
      const field = await this.repo.findField(resource.id, 'conversation', req.field_id, m);
      const current = ((field?.value['messages'] as { ident: string }[] | undefined) ?? []).slice();
      const foreign = attachmentIssues(resource, req.messages, (i) => ['body', i]);
      if (foreign.length > 0) throw DomainError.validation(foreign);
      const known = new Set(current.map((x) => x.ident));
      for (const [i, message] of req.messages.entries()) {
        if (known.has(message.ident))
          throw DomainError.validation([
            { loc: ['body', i, 'ident'], msg: `Message ident "${message.ident}" already exists`, type: 'value_error' },
          ]);
        known.add(message.ident);
      }
      const messages = [...current, ...JSON.parse(JSON.stringify(req.messages))];
      if (messages.length > MAX_MESSAGES)
        throw DomainError.validation([{ loc: ['body'], msg: `A conversation holds at most ${MAX_MESSAGES} messages`, type: 'too_long' }]);
      return pendingFieldRows(
        resource,
        [{ fieldType: 'conversation', fieldId: req.field_id, value: { ...(field?.value ?? {}), messages } }],
        seqid,
        now,
      );
    });
  }

  async deleteMessage(req: DeleteMessageRequest): Promise<Record<string, never>> {
    await this.write(req, 'modified', req.actor, async (m, resource, seqid, now) => {
      const field = await this.repo.findField(resource.id, 'conversation', req.field_id, m);
      const messages = (field?.value['messages'] as { ident: string }[] | undefined) ?? [];
      if (!field || !messages.some((x) => x.ident === req.ident)) throw new DomainError(ErrorCodes.NOT_FOUND, 'Message not found');
      return pendingFieldRows(
        resource,
        [
          {
            fieldType: 'conversation',
            fieldId: req.field_id,
            value: { ...field.value, messages: messages.filter((x) => x.ident !== req.ident) },
          },
        ],
        seqid,
        now,
      );
    });
    return {};
  }

  /**
   * Runs processing again for every field (or one): new seqid, fields PENDING. A file whose bytes
   * were not kept (x-skip-store) cannot be processed again: it is left as it is, or refused when named.
   */
  async reprocess(req: ReprocessRequest): Promise<SeqIdDto> {
    return this.write(req, 'modified', req.actor, async (m, resource, seqid, now) => {
      const named = (await this.repo.fieldsOf(resource.id, m)).filter(
        (f) => (!req.field_type || f.fieldType === req.field_type) && (!req.field_id || f.fieldId === req.field_id),
      );
      if (req.field_id && named.length === 0) throw new DomainError(ErrorCodes.FIELD_NOT_FOUND, 'Field not found');
      if (req.field_id && named.every(isReleased)) {
        throw new DomainError(
          ErrorCodes.CONFLICT,
          `The file of field ${req.field_id} was not kept (x-skip-store), so it cannot be processed again`,
        );
      }
      const fields = named.filter((f) => !isReleased(f));
      return pendingFieldRows(
        resource,
        fields.map((f) => ({ fieldType: f.fieldType, fieldId: f.fieldId, value: f.value })),
        seqid,
        now,
      );
    });
  }

  /** A file the edge streamed to the blob store becomes a file field (of a new resource when `create`). */
  async registerUpload(req: RegisterUploadRequest): Promise<{ uuid: string; seqid: number; field_id: string }> {
    const file = {
      file: { uri: req.file.uri, filename: req.file.filename, content_type: req.file.content_type, md5: req.file.md5 },
      password: req.password,
      language: req.language,
      extract_strategy: req.extract_strategy,
      split_strategy: req.split_strategy,
    };
    // The edge checked the strategy headers before storing the bytes; checked again here, at the headers.
    await this.configs.assertStrategies(req.kbid, [
      ...(req.extract_strategy ? [{ kind: 'extract' as const, id: req.extract_strategy, loc: ['header', 'x-extract-strategy'] }] : []),
      ...(req.split_strategy ? [{ kind: 'split' as const, id: req.split_strategy, loc: ['header', 'x-split-strategy'] }] : []),
    ]);
    if (req.create) {
      const members = req.resource ?? {};
      const created = await this.resources.create(
        {
          kbid: req.kbid,
          rid: req.rid,
          actor: req.actor,
          skip_store: req.skip_store,
          body: { title: req.file.filename, ...members, files: { [req.field_id]: file } } as never,
        },
        { [req.field_id]: req.file.size },
      );
      return { uuid: created.uuid, seqid: created.seqid, field_id: req.field_id };
    }
    const writes = fieldWritesOf({ files: { [req.field_id]: file as never } }, new Date().toISOString());
    writes.forEach((w) => ((w.value['file'] as Record<string, unknown>)['size'] = req.file.size));
    const { seqid } = await this.write({ kbid: req.kbid, rid: req.rid }, 'modified', req.actor, async (_m, resource, s, now) =>
      pendingFieldRows(resource, prepareFileWrites(resource, writes, req.skip_store), s, now),
    );
    return { uuid: req.rid, seqid, field_id: req.field_id };
  }

  async md5Exists(req: Md5Request): Promise<{ exists: boolean }> {
    const rows: unknown[] = await this.ds.query(
      `SELECT 1 FROM content.fields WHERE kbid = $1 AND field_type = 'file' AND value->'file'->>'md5' = $2 LIMIT 1`,
      [req.kbid, req.md5],
    );
    return { exists: rows.length > 0 };
  }

  /** Shared write path: lock, new seqid, upsert the fields, refresh status, outbox jobs + audit. */
  private async write(
    ref: { kbid: string; rid?: string; slug?: string },
    type: 'modified',
    actor: PutFieldRequest['actor'],
    fieldsOf: (m: EntityManager, resource: ResourceEntity, seqid: number, now: Date) => Promise<FieldEntity[]>,
  ): Promise<SeqIdDto> {
    const started = Date.now();
    const now = new Date();
    const result = await this.ds.transaction(async (m) => {
      const resource = await this.repo.lockByRef(m, ref);
      const seqid = await this.repo.nextSeqid(m);
      const rows = await fieldsOf(m, resource, seqid, now);
      const previous = rows.some((f) => f.fieldType === 'file') ? await this.repo.fieldsOf(resource.id, m) : [];
      const fields = keepMeasuredSizes(previous, rows);
      await this.repo.upsertFields(m, fields);
      await this.refreshStatus(m, resource, seqid, now);
      const entries = [
        ...processingJobs(resource, fields),
        ...supersededUnstored(previous, fields),
        ...supersededFiles(previous, fields),
        auditEntry(ref.kbid, type, resource.id, actor, started, writtenBytes(previous, fields)),
      ];
      return { seqid, resource: { id: resource.id, title: resource.title }, rows: await this.outbox.add(m, entries) };
    });
    this.outbox.relayInBackground(result.rows);
    this.notifier.written(ref.kbid, result.resource, result.seqid, 'modified');
    return { seqid: result.seqid };
  }

  private async refreshStatus(m: EntityManager, resource: ResourceEntity, seqid: number, now = new Date()): Promise<void> {
    const statuses = (await this.repo.fieldsOf(resource.id, m)).map((f) => f.status);
    const patch = { status: deriveResourceStatus(statuses), lastSeqid: seqid, modifiedAt: now };
    await this.repo.updateResource(m, resource.id, patch);
    await this.indexer.syncResource(m, { ...resource, ...patch });
  }

  private async find(ref: { kbid: string; rid?: string; slug?: string }): Promise<ResourceEntity> {
    const found = ref.rid ? await this.repo.findById(ref.kbid, ref.rid) : ref.slug ? await this.repo.findBySlug(ref.kbid, ref.slug) : null;
    if (!found) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    return found;
  }

  private conversationPage(value: Record<string, unknown>, page?: string): Record<string, unknown> {
    const messages = (value['messages'] as unknown[] | undefined) ?? [];
    const pages = Math.max(1, Math.ceil(messages.length / MESSAGES_PER_PAGE));
    const n = page === undefined || page === 'first' ? 1 : page === 'last' ? pages : Number(page);
    if (!Number.isInteger(n) || n < 1 || n > pages)
      throw DomainError.validation([{ loc: ['query', 'page'], msg: `page must be first, last or 1..${pages}`, type: 'value_error' }]);
    return {
      messages: messages.slice((n - 1) * MESSAGES_PER_PAGE, n * MESSAGES_PER_PAGE),
      pages,
      size: MESSAGES_PER_PAGE,
      total: messages.length,
      page: n,
    };
  }
}
