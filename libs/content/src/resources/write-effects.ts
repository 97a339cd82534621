import { randomUUID } from 'node:crypto';
import { ContentSubjects, UnderstandingSubjects, type ActorDto, type AuditEventType, type WebhookTargetDto } from '@kb/contracts';
import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import type { OutboxEntry } from '../outbox/outbox.service';
import type { FieldWrite } from './field-values';

/** Rows for fields written by one write (status PENDING until processed). */
export function pendingFieldRows(
  resource: Pick<ResourceEntity, 'id' | 'kbid'>,
  writes: FieldWrite[],
  seqid: number,
  now: Date,
): FieldEntity[] {
  return writes.map((w) => ({
    rid: resource.id,
    fieldType: w.fieldType,
    fieldId: w.fieldId,
    kbid: resource.kbid,
    value: w.value,
    extracted: null,
    status: 'PENDING',
    error: null,
    errors: [],
    seqid,
    modifiedAt: now,
  }));
}

/** One processing job per written field, recorded in the outbox with the write; `labels` go to the jobs' status records. */
export function processingJobs(
  resource: Pick<ResourceEntity, 'id' | 'kbid' | 'title' | 'metadata'>,
  fields: FieldEntity[],
  labels?: string[],
  webhook?: WebhookTargetDto,
  /** The understanding-API client whose key wrote (a push): the processing is metered under its key. */
  nuaKeyId?: string,
): OutboxEntry[] {
  return fields.map((f) => ({
    kind: 'queue' as const,
    target: UnderstandingSubjects.processField.subject,
    payload: {
      processing_id: randomUUID(),
      kbid: resource.kbid,
      rid: resource.id,
      field_type: f.fieldType,
      field_id: f.fieldId,
      seqid: f.seqid,
      value: f.value,
      title: resource.title,
      ...(typeof resource.metadata['language'] === 'string' ? { language: resource.metadata['language'] } : {}),
      ...(labels && labels.length > 0 ? { labels } : {}),
      ...(webhook ? { webhook } : {}),
      ...(nuaKeyId ? { nua_key_id: nuaKeyId } : {}),
    },
  }));
}

/**
 * `bytes`: the change this write made to the bytes the KB holds in the blob store (see
 * heldBytes), metered by reporting as `storage_bytes`; left out when 0.
 */
export function auditEntry(
  kbid: string,
  type: AuditEventType,
  rid: string,
  actor: ActorDto | undefined,
  started: number,
  bytes = 0,
): OutboxEntry {
  return {
    kind: 'event',
    target: ContentSubjects.auditRecorded.subject,
    payload: {
      event_id: randomUUID(),
      kbid,
      type,
      date: new Date().toISOString(),
      resource_id: rid,
      total_duration: Date.now() - started,
      ...(actor?.user ? { user_id: actor.user } : {}),
      ...(actor?.client_type ? { client_type: actor.client_type } : {}),
      user_type: actor?.user_type ?? 'user',
      ...(actor?.nua_key_id ? { nua_key_id: actor.nua_key_id } : {}),
      ...(bytes !== 0 ? { audit_metadata: { bytes } } : {}),
    },
  };
}

/** Tells the search index to rebuild a resource's rows (`content.resource.reindexed`). */
export function reindexedEvent(
  resource: Pick<ResourceEntity, 'id' | 'kbid'>,
  reindexVectors: boolean,
  fields: Pick<FieldEntity, 'fieldType' | 'fieldId' | 'seqid' | 'status'>[],
): OutboxEntry {
  return {
    kind: 'event',
    target: ContentSubjects.resourceReindexed.subject,
    payload: {
      event_id: randomUUID(),
      kbid: resource.kbid,
      rid: resource.id,
      reindex_vectors: reindexVectors,
      date: new Date().toISOString(),
      fields: fields.map((f) => ({ field_type: f.fieldType, field_id: f.fieldId, seqid: f.seqid, status: f.status })),
    },
  };
}
