import { Injectable } from '@nestjs/common';
import {
  DomainError,
  ErrorCodes,
  type ActorDto,
  type AuditRecordedEvent,
  type ExtractedOption,
  type FieldRecord,
  type FieldType,
  type GetResourceRequest,
  type KbCountersDto,
  type ListResourcesRequest,
  type ResourceDto,
  type ResourceListDto,
  type ResourceRef,
  type ShowOption,
} from '@kb/contracts';
import { AuditBatchService } from '../audit/audit-batch.service';
import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import { BODY_MEMBER_OF, publicFieldValue } from './field-values';
import { ResourcesRepository } from './resources.repository';
import { auditEntry } from './write-effects';
import { SUMMARY_GENERATED } from './resource-summary';

const DEFAULT_SHOW: ShowOption[] = ['basic'];
const DEFAULT_FIELD_TYPES: FieldType[] = ['text', 'file', 'link', 'conversation', 'key_value', 'keywordset', 'datetime', 'generic'];
const DEFAULT_EXTRACTED: ExtractedOption[] = ['text', 'metadata', 'link', 'file'];
export interface SerializeOptions {
  show: ShowOption[];
  fieldTypes: FieldType[];
  extracted: ExtractedOption[];
}

/** Serializes resources exactly as `show`, `field_type` and `extracted` ask (spec 2.1 / 4.2). */
export function serializeResource(r: ResourceEntity, fields: FieldEntity[], o: SerializeOptions): ResourceDto {
  const out: ResourceDto = { id: r.id };
  const show = new Set(o.show);
  if (show.has('basic')) {
    Object.assign(out, {
      slug: r.slug,
      title: r.title,
      summary: r.summary,
      icon: r.icon,
      thumbnail: r.thumbnail,
      metadata: { metadata: {}, language: null, languages: [], ...r.metadata, status: r.status },
      usermetadata: { classifications: [], relations: [], ...r.usermetadata },
      fieldmetadata: r.fieldmetadata,
      computedmetadata: withoutInternal(r.computedmetadata),
      created: r.createdAt.toISOString(),
      modified: r.modifiedAt.toISOString(),
      last_seqid: r.lastSeqid,
      last_account_seq: r.lastSeqid,
      queue: 'private',
      hidden: r.hidden,
    });
  }
  if (show.has('origin')) out.origin = { source: 'API', tags: [], collaborators: [], related: [], metadata: {}, ...r.origin };
  if (show.has('extra')) out.extra = { metadata: {}, ...r.extra };
  if (show.has('relations')) out.relations = r.relations;
  if (show.has('security')) out.security = { access_groups: r.accessGroups };
  const withValues = show.has('values');
  const withExtracted = show.has('extracted');
  const withErrors = show.has('errors');
  if (withValues || withExtracted || withErrors) {
    const data: NonNullable<ResourceDto['data']> = {};
    for (const f of fields) {
      if (!o.fieldTypes.includes(f.fieldType)) continue;
      const record: FieldRecord = { status: f.status };
      if (withValues) record.value = publicFieldValue(f.fieldType, f.value);
      if (withExtracted && f.extracted) {
        // `vectors` also brings the vectors of the KB's other semantic models (`vectorsets`).
        const wanted = (k: string) => o.extracted.includes((k === 'vectorsets' ? 'vectors' : k) as ExtractedOption);
        record.extracted = Object.fromEntries(Object.entries(f.extracted).filter(([k]) => wanted(k)));
      }
      if (withErrors) {
        record.error = f.error;
        record.errors = f.errors;
      }
      const key = BODY_MEMBER_OF[f.fieldType];
      (data[key] ??= {})[f.fieldId] = record;
    }
    out.data = data;
  }
  return out;
}

@Injectable()
export class ResourceReaderService {
  constructor(
    private readonly repo: ResourcesRepository,
    private readonly auditBatch: AuditBatchService,
  ) {}

  /** A read on behalf of a caller (`actor` set, as the edge does) is recorded as `visited`. */
  async get(req: GetResourceRequest): Promise<ResourceDto> {
    const started = Date.now();
    const resource = await this.find(req);
    if (!resource) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    const options = this.options(req);
    const needsFields = options.show.some((s) => s === 'values' || s === 'extracted' || s === 'errors');
    const out = serializeResource(resource, needsFields ? await this.repo.fieldsOf(resource.id) : [], options);
    if (req.actor) this.recordVisit(req.kbid, resource.id, req.actor, started);
    return out;
  }

  /**
   * Published with the other reads' and searches' events after the reply is on its way: a read
   * never waits for the audit stream nor fails because of it (AuditBatchService).
   */
  private recordVisit(kbid: string, rid: string, actor: ActorDto, started: number): void {
    this.auditBatch.record(auditEntry(kbid, 'visited', rid, actor, started).payload as unknown as AuditRecordedEvent);
  }

  async exists(ref: ResourceRef): Promise<{ exists: boolean; rid?: string }> {
    const found = await this.find(ref);
    return found ? { exists: true, rid: found.id } : { exists: false };
  }

  async list(req: ListResourcesRequest): Promise<ResourceListDto> {
    const page = req.page ?? 0;
    const size = req.size ?? 20;
    const { rows, more } = await this.repo.page(req.kbid, page, size, req.show_hidden ?? false);
    return {
      resources: rows.map((r) =>
        serializeResource(r, [], { show: DEFAULT_SHOW, fieldTypes: DEFAULT_FIELD_TYPES, extracted: DEFAULT_EXTRACTED }),
      ),
      pagination: { page, size, last: !more },
    };
  }

  async count(kbid: string): Promise<{ resources: number }> {
    return { resources: await this.repo.count(kbid) };
  }

  counters(kbid: string): Promise<KbCountersDto> {
    return this.repo.counters(kbid);
  }

  private find(ref: ResourceRef): Promise<ResourceEntity | null> {
    if (ref.rid) return this.repo.findById(ref.kbid, ref.rid);
    if (ref.slug) return this.repo.findBySlug(ref.kbid, ref.slug);
    throw DomainError.validation([{ loc: ['rid'], msg: 'A resource id or slug is required', type: 'missing' }]);
  }

  private options(req: GetResourceRequest): SerializeOptions {
    return {
      show: req.show && req.show.length > 0 ? req.show : DEFAULT_SHOW,
      fieldTypes: req.field_type && req.field_type.length > 0 ? req.field_type : DEFAULT_FIELD_TYPES,
      extracted: req.extracted && req.extracted.length > 0 ? req.extracted : DEFAULT_EXTRACTED,
    };
  }
}

/** `computedmetadata` as clients see it: without the service's own bookkeeping. */
function withoutInternal(computed: Record<string, unknown>): Record<string, unknown> {
  if (!computed || !(SUMMARY_GENERATED in computed)) return computed;
  const { [SUMMARY_GENERATED]: _internal, ...rest } = computed;
  return rest;
}
