import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  fileBlobKey,
  PROCESSING_UPLOAD_TOKEN,
  processingUploadKey,
  pushedAttachmentKey,
  type FileFieldInputDto,
  type FileInputDto,
  type PushPayloadDto,
  type ValidationIssue,
} from '@kb/contracts';
import { BLOB_STORE, type BlobStat, type BlobStore } from '@kb/platform/storage';
import type { PushedFiles } from './push-payload';
import type { PushedBytes } from '../resources/held-bytes';

/** A file a push names by token: where it waits and what its upload said about it. */
interface StagedUpload {
  token: string;
  key: string;
  stat: BlobStat;
}

/** The files of one push, located and checked, ready to be moved under the resource. */
export interface StagedPush {
  files: Record<string, StagedUpload>;
  attachments: Record<string, Record<number, StagedUpload[]>>;
}

const UNKNOWN_TOKEN =
  'Unknown upload token: upload the file with POST /api/v1/processing/upload first; a token names one file and is used by one push';

/**
 * The file tokens of a push ("Send Data To Process" `filefield` and message attachments): files an
 * understanding-API client sent to Upload Binary File, staged under its account. `locate` checks
 * every token before anything is written; `move` copies the files under the resource (before the
 * write, so no resource row ever names a missing blob); `release` deletes the staged copies once the
 * write committed, which makes a token single-use. If the write fails, `discard` removes the copies
 * and the tokens stay valid for a retry.
 */
@Injectable()
export class PushFilesService {
  constructor(@Inject(BLOB_STORE) private readonly blobs: BlobStore) {}

  /** Every token of `p`, checked; one 422 lists every token that names no staged file of `account`. */
  async locate(account: string | undefined, p: PushPayloadDto): Promise<StagedPush> {
    const issues: ValidationIssue[] = [];
    const find = async (token: string, loc: (string | number)[]): Promise<StagedUpload | undefined> => {
      const stat = account && PROCESSING_UPLOAD_TOKEN.test(token) ? await this.blobs.stat(processingUploadKey(account, token)) : null;
      if (!stat) {
        issues.push({ loc, msg: UNKNOWN_TOKEN, type: 'value_error' });
        return undefined;
      }
      return { token, key: processingUploadKey(account as string, token), stat };
    };
    const staged: StagedPush = { files: {}, attachments: {} };
    for (const [field, token] of Object.entries(p.filefield ?? {})) {
      const found = typeof token === 'string' ? await find(token, ['body', 'filefield', field]) : undefined;
      if (typeof token !== 'string')
        issues.push({ loc: ['body', 'filefield', field], msg: 'A file token is a string', type: 'string_type' });
      if (found) staged.files[field] = found;
    }
    for (const [field, conversation] of Object.entries(p.conversationfield ?? {})) {
      for (const [i, message] of conversation.messages.entries()) {
        const tokens = message.content.attachments ?? [];
        const found: StagedUpload[] = [];
        for (const [j, token] of tokens.entries()) {
          const one = await find(token, ['body', 'conversationfield', field, 'messages', i, 'content', 'attachments', j]);
          if (one) found.push(one);
        }
        if (tokens.length > 0) (staged.attachments[field] ??= {})[i] = found;
      }
    }
    const seen = new Set<string>();
    for (const upload of allOf(staged)) {
      if (seen.has(upload.token))
        issues.push({
          loc: ['body'],
          msg: `Upload token ${upload.token.slice(0, 8)}… is named twice; one token names one file`,
          type: 'value_error',
        });
      seen.add(upload.token);
    }
    if (issues.length > 0) throw DomainError.validation(issues);
    return staged;
  }

  /**
   * Copies the staged files under resource `rid`; returns the field values, the keys written and
   * their bytes (as the edge measured them when the client uploaded them: a copy is byte for byte).
   */
  async move(kbid: string, rid: string, staged: StagedPush): Promise<{ pushed: PushedFiles; written: string[]; bytes: PushedBytes }> {
    const written: string[] = [];
    const pushed: PushedFiles = { files: {}, attachments: {} };
    const bytes: PushedBytes = { files: {}, attachments: {} };
    try {
      for (const [field, upload] of Object.entries(staged.files)) {
        const key = fileBlobKey(kbid, rid, field);
        await this.blobs.copy(upload.key, key);
        written.push(key);
        pushed.files[field] = fileFieldOf(upload, key);
        bytes.files[field] = upload.stat.size;
      }
      for (const [field, messages] of Object.entries(staged.attachments)) {
        for (const [i, uploads] of Object.entries(messages)) {
          const files: FileInputDto[] = [];
          for (const upload of uploads) {
            const key = pushedAttachmentKey(kbid, rid, field, upload.token);
            await this.blobs.copy(upload.key, key);
            written.push(key);
            files.push(fileOf(upload, key));
            (bytes.attachments[field] ??= {})[key] = upload.stat.size;
          }
          (pushed.attachments[field] ??= {})[Number(i)] = files;
        }
      }
    } catch (err) {
      await this.discard(written);
      throw err;
    }
    return { pushed, written, bytes };
  }

  async discard(keys: string[]): Promise<void> {
    for (const key of keys) await this.blobs.delete(key).catch(() => undefined);
  }

  /**
   * The write committed: the staged copies go and the tokens with them. A failure here leaves a
   * staged file that the gateway's sweep removes when it expires; the push itself succeeded.
   */
  async release(staged: StagedPush): Promise<void> {
    for (const upload of allOf(staged)) await this.blobs.delete(upload.key).catch(() => undefined);
  }
}

function allOf(staged: StagedPush): StagedUpload[] {
  return [...Object.values(staged.files), ...Object.values(staged.attachments).flatMap((m) => Object.values(m).flat())];
}

function fileOf(upload: StagedUpload, key: string): FileInputDto {
  const filename = upload.stat.metadata['filename'];
  const md5 = upload.stat.md5 ?? upload.stat.metadata['md5'];
  return {
    uri: `blob:${key}`,
    content_type: upload.stat.contentType,
    ...(filename ? { filename } : {}),
    ...(md5 && /^[a-f0-9]{32}$/.test(md5) ? { md5 } : {}),
  };
}

function fileFieldOf(upload: StagedUpload, key: string): FileFieldInputDto {
  const { password, language } = upload.stat.metadata;
  return { file: fileOf(upload, key), ...(password ? { password } : {}), ...(language ? { language } : {}) };
}
