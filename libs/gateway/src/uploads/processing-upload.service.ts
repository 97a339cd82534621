import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { AccountsSubjects, DomainError, ErrorCodes, processingUploadKey } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { isMedia, resolveContentType } from './media-types';
import type { UploadedFile } from './upload.service';

export interface ProcessingUploadInput extends UploadedFile {
  /** The understanding-API client's account: the staged file belongs to it. */
  accountId: string;
}

/**
 * Upload Binary File (spec 4.5): streams a file to the blob store, staged under the client's
 * account, and answers with the token a push names it by (`filefield`, message attachments).
 * The staged file carries its upload's headers as metadata; a push moves it into a resource, and
 * an unused one expires (StagedUploadsSweeper).
 */
@Injectable()
export class ProcessingUploadService {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async stage(input: ProcessingUploadInput): Promise<string> {
    const contentType = resolveContentType(input.declaredType, input.filename);
    if (!contentType)
      throw new DomainError(
        ErrorCodes.UNSUPPORTED_MEDIA_TYPE,
        `Unsupported file type ${input.declaredType ?? ''}${input.filename ? ` (${input.filename})` : ''}`.trim(),
      );
    if (input.md5 !== undefined && !/^[a-fA-F0-9]{32}$/.test(input.md5)) {
      throw DomainError.validation([
        { loc: ['header', 'x-md5'], msg: 'x-md5 must be 32 hexadecimal characters', type: 'string_pattern_mismatch' },
      ]);
    }
    const limits = await this.bus.request(
      AccountsSubjects.accountUploadLimits,
      { account_id: input.accountId },
      { context: input.context },
    );
    const maxBytes = isMedia(contentType) ? limits.upload_limit_max_media_file_size : limits.upload_limit_max_non_media_file_size;
    if (input.declaredSize !== undefined && maxBytes >= 0 && input.declaredSize > maxBytes) {
      throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `The file is larger than this account's limit of ${maxBytes} bytes`);
    }
    const token = randomBytes(32).toString('base64url');
    const key = processingUploadKey(input.accountId, token);
    const metadata: Record<string, string> = {};
    if (input.filename) metadata['filename'] = input.filename;
    if (input.password) metadata['password'] = input.password;
    if (input.language) metadata['language'] = input.language;
    if (input.md5) metadata['md5'] = input.md5.toLowerCase();
    const stat = await this.blobs.put(key, input.body, { contentType, metadata, ...(maxBytes >= 0 ? { maxBytes } : {}) });
    if (input.md5 && stat.md5 && stat.md5 !== input.md5.toLowerCase()) {
      await this.blobs.delete(key).catch(() => undefined);
      throw DomainError.validation([{ loc: ['header', 'x-md5'], msg: 'x-md5 does not match the uploaded bytes', type: 'value_error' }]);
    }
    return token;
  }
}
