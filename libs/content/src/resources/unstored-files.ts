import { DomainError, unstoredFileDir, type ValidationIssue } from '@kb/contracts';
import type { FieldEntity } from '../entities/field.entity';
import type { ResourceEntity } from '../entities/resource.entity';
import type { OutboxEntry } from '../outbox/outbox.service';
import { bodyFieldLoc, type FieldWrite } from './field-values';

type Owner = Pick<ResourceEntity, 'id' | 'kbid'>;
type Loc = (string | number)[];

const fileOf = (value: Record<string, unknown>): Record<string, unknown> => (value['file'] ?? {}) as Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A `blob:` address in a field names an object processing reads and downloads serve, so a client
 * may only name its own resource's objects (the ones the edge stored for it): never another
 * resource's or another KB's.
 */
function foreignBlob(owner: Owner, uri: unknown): boolean {
  return typeof uri === 'string' && uri.startsWith('blob:') && !uri.startsWith(`blob:content/kbs/${owner.kbid}/r/${owner.id}/`);
}

const foreignIssue = (loc: Loc): ValidationIssue => ({
  loc,
  msg: 'A blob: address may only name a file stored for this resource',
  type: 'value_error',
});

/** Issues for attachments of conversation messages that name foreign blobs; `locOf(i)` locates message i. */
export function attachmentIssues(owner: Owner, messages: unknown, locOf: (i: number) => Loc): ValidationIssue[] {
  if (!Array.isArray(messages)) return [];
  const issues: ValidationIssue[] = [];
  messages.forEach((message: unknown, i) => {
    const attachments = isObject(message) && isObject(message['content']) ? message['content']['attachments'] : undefined;
    if (!Array.isArray(attachments)) return;
    attachments.forEach((a: unknown, j) => {
      if (isObject(a) && foreignBlob(owner, a['uri'])) issues.push(foreignIssue([...locOf(i), 'content', 'attachments', j, 'uri']));
    });
  });
  return issues;
}

/**
 * Checks the blob addresses of field writes and marks files written with `x-skip-store` (the
 * edge stored them under the field's `unstored/<upload id>/` directory) so they are deleted once
 * processed. Returns the writes, for chaining.
 */
export function prepareFileWrites(
  owner: Owner,
  writes: FieldWrite[],
  skipStore: boolean | undefined,
  locOf: (w: FieldWrite) => Loc = bodyFieldLoc,
): FieldWrite[] {
  const issues: ValidationIssue[] = [];
  for (const w of writes) {
    if (w.fieldType === 'file' && foreignBlob(owner, fileOf(w.value)['uri'])) issues.push(foreignIssue([...locOf(w), 'file', 'uri']));
    if (w.fieldType === 'conversation') issues.push(...attachmentIssues(owner, w.value['messages'], (i) => [...locOf(w), 'messages', i]));
  }
  if (issues.length > 0) throw DomainError.validation(issues);
  if (skipStore) {
    for (const w of writes) {
      if (w.fieldType === 'file' && unstoredFileDir({ kbid: owner.kbid, rid: owner.id, field_id: w.fieldId }, fileOf(w.value)['uri']))
        w.value['skip_store'] = true;
    }
  }
  return writes;
}

/** The unstored directory a field's value still points at, if any. */
function pendingUnstored(field: Pick<FieldEntity, 'kbid' | 'rid' | 'fieldType' | 'fieldId' | 'value'>): string | undefined {
  if (field.fieldType !== 'file' || field.value['skip_store'] !== true) return undefined;
  return unstoredFileDir({ kbid: field.kbid, rid: field.rid, field_id: field.fieldId }, fileOf(field.value)['uri']);
}

/**
 * Once the result of a field's current write is applied, processing has read the file: an
 * unstored one is deleted (through the outbox, in the same transaction) and the value stops
 * pointing at it. The rest of the file reference (name, type, size, md5) stays.
 */
export function releaseUnstored(field: FieldEntity): { value: Record<string, unknown>; cleanup: OutboxEntry } | undefined {
  const dir = pendingUnstored(field);
  if (!dir) return undefined;
  const { uri: _uri, ...file } = fileOf(field.value);
  return { value: { ...field.value, file }, cleanup: { kind: 'blob_cleanup', target: dir } };
}

/** An unstored file that was already deleted: the field cannot be processed again. */
export function isReleased(field: Pick<FieldEntity, 'fieldType' | 'value'>): boolean {
  return field.fieldType === 'file' && field.value['skip_store'] === true && !fileOf(field.value)['uri'];
}

/**
 * A write that replaces a file field before its unstored file was processed: the older job's
 * result will be ignored, so nothing else would delete that file. Its key is unique to that
 * write, so deleting it cannot touch the new value's bytes.
 */
export function supersededUnstored(previous: FieldEntity[], next: FieldEntity[]): OutboxEntry[] {
  const written = new Map(next.map((f) => [`${f.fieldType}/${f.fieldId}`, f]));
  const out: OutboxEntry[] = [];
  for (const old of previous) {
    const dir = pendingUnstored(old);
    const replacement = written.get(`${old.fieldType}/${old.fieldId}`);
    if (dir && replacement && fileOf(replacement.value)['uri'] !== fileOf(old.value)['uri'])
      out.push({ kind: 'blob_cleanup', target: dir });
  }
  return out;
}
