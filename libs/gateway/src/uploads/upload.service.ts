import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AccountsSubjects,
  ContentSubjects,
  DomainError,
  ErrorCodes,
  fileBlobKey,
  STRATEGY_ID_PATTERN,
  unstoredFileKey,
  type ActorDto,
  type BusContext,
  type FileFieldInputDto,
  type CreateResourceDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { isMedia, resolveContentType } from './media-types';

/** A file arriving in a request body, with what its headers said about it. */
export interface UploadedFile {
  body: Readable | Buffer;
  declaredType?: string;
  filename?: string;
  md5?: string;
  password?: string;
  language?: string;
  declaredSize?: number;
  context: BusContext;
}

export interface UploadInput extends UploadedFile {
  kbid: string;
  /** Existing resource (field upload) or none (a new resource). */
  target?: { rid?: string; slug?: string };
  fieldId?: string;
  /** `x-extract-strategy` and `x-split-strategy`: ids of the KB's strategies the file field names. */
  strategies?: UploadStrategies;
  /** Members of a new resource (e.g. a TUS creation body). */
  resource?: CreateResourceDto;
  /** `x-skip-store: true`: the file goes to processing and is deleted once processed. */
  skipStore?: boolean;
  actor: ActorDto;
}

/** The strategies an upload's headers name (`x-extract-strategy`, `x-split-strategy`). */
export interface UploadStrategies {
  extract?: string;
  split?: string;
}

const STRATEGY_HEADERS = { extract: 'x-extract-strategy', split: 'x-split-strategy' } as const;

/** The strategy headers of an upload (or a TUS creation); an id not of a strategy's form is 422 at its header. */
export function uploadStrategiesOf(headers: Record<string, string | string[] | undefined>): UploadStrategies {
  const out: UploadStrategies = {};
  for (const kind of ['extract', 'split'] as const) {
    const raw = headers[STRATEGY_HEADERS[kind]];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value === undefined || value === '') continue;
    if (!STRATEGY_ID_PATTERN.test(value))
      throw DomainError.validation([
        {
          loc: ['header', STRATEGY_HEADERS[kind]],
          msg: `${STRATEGY_HEADERS[kind]} is not a ${kind} strategy id of this Knowledge Box`,
          type: 'value_error',
        },
      ]);
    out[kind] = value;
  }
  return out;
}

/** Where an uploaded file goes: the field's original, or (x-skip-store) a key of its own that processing deletes. */
export const uploadBlobKey = (kbid: string, rid: string, fieldId: string, skipStore: boolean | undefined): string =>
  skipStore ? unstoredFileKey(kbid, rid, fieldId, randomUUID()) : fileBlobKey(kbid, rid, fieldId);

/**
 * Streams a file to the blob store, then registers it with content. Bytes never ride the bus.
 * If registering fails, the bytes are deleted again: no blob without a resource.
 */
@Injectable()
export class UploadService {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async upload(input: UploadInput): Promise<{ seqid: number; uuid: string; field_id: string }> {
    const opts = { context: input.context };
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
    if (input.md5 && (await this.bus.request(ContentSubjects.md5Exists, { kbid: input.kbid, md5: input.md5.toLowerCase() }, opts)).exists) {
      throw new DomainError(ErrorCodes.DUPLICATE_FILE, 'File already exists in the Knowledge Box');
    }
    const limits = await this.bus.request(AccountsSubjects.kbUploadLimits, { kb_id: input.kbid }, opts);
    const maxBytes = isMedia(contentType) ? limits.upload_limit_max_media_file_size : limits.upload_limit_max_non_media_file_size;
    if (input.declaredSize !== undefined && maxBytes >= 0 && input.declaredSize > maxBytes) {
      throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `The file is larger than this account's limit of ${maxBytes} bytes`);
    }

    // Named strategies must exist before any byte is stored (content checks again when registering).
    await this.assertStrategies(input.kbid, input.strategies, input.context);
    const create = !input.target;
    const rid = input.target ? await this.existingResource(input.kbid, input.target, input.context) : randomUUID();
    const fieldId = input.fieldId ?? randomBytes(16).toString('hex');
    const key = uploadBlobKey(input.kbid, rid, fieldId, input.skipStore);
    const stat = await this.blobs.put(key, input.body, {
      contentType,
      ...(maxBytes >= 0 ? { maxBytes } : {}),
      metadata: input.filename ? { filename: input.filename } : {},
    });
    try {
      if (input.md5 && stat.md5 && stat.md5 !== input.md5.toLowerCase()) {
        throw DomainError.validation([{ loc: ['header', 'x-md5'], msg: 'x-md5 does not match the uploaded bytes', type: 'value_error' }]);
      }
      return await this.bus.request(
        ContentSubjects.registerUpload,
        {
          kbid: input.kbid,
          rid,
          create,
          field_id: fieldId,
          actor: input.actor,
          ...(input.skipStore ? { skip_store: true } : {}),
          file: { uri: `blob:${key}`, filename: input.filename, content_type: contentType, size: stat.size, md5: stat.md5 ?? '' },
          ...(input.password ? { password: input.password } : {}),
          ...(input.language ? { language: input.language } : {}),
          ...(input.strategies?.extract ? { extract_strategy: input.strategies.extract } : {}),
          ...(input.strategies?.split ? { split_strategy: input.strategies.split } : {}),
          ...(input.resource ? { resource: input.resource } : {}),
        },
        opts,
      );
    } catch (err) {
      await (create ? this.blobs.deletePrefix(`content/kbs/${input.kbid}/r/${rid}/`) : this.blobs.delete(key)).catch(() => undefined);
      throw err;
    }
  }

  /** 422 at the header of each named strategy the KB does not have. */
  async assertStrategies(kbid: string, strategies: UploadStrategies | undefined, context: BusContext): Promise<void> {
    const issues = [];
    for (const kind of ['extract', 'split'] as const) {
      const id = strategies?.[kind];
      if (!id) continue;
      try {
        await this.bus.request(ContentSubjects.getStrategy, { kbid, kind, strategy_id: id }, { context });
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== ErrorCodes.NOT_FOUND) throw err;
        issues.push({
          loc: ['header', STRATEGY_HEADERS[kind]],
          msg: `${kind === 'split' ? 'Split' : 'Extract'} strategy ${id} does not exist in this Knowledge Box`,
          type: 'value_error',
        });
      }
    }
    if (issues.length > 0) throw DomainError.validation(issues);
  }

  /** The id of the resource an upload goes into; 404 when there is none. */
  async existingResource(kbid: string, target: { rid?: string; slug?: string }, context: BusContext): Promise<string> {
    const found = await this.bus.request(ContentSubjects.resourceExists, { kbid, ...target }, { context });
    if (!found.exists || !found.rid) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource is not found or not yet available');
    return found.rid;
  }

  /** Inline base64 payloads of JSON file fields: stored first, replaced by their blob uri. */
  async storeInlinePayload(
    kbid: string,
    rid: string,
    fieldId: string,
    payload: string,
    contentType: string | undefined,
    filename: string | undefined,
    skipStore = false,
  ): Promise<{ uri: string; size: number; md5: string; content_type: string }> {
    const resolved = resolveContentType(contentType, filename);
    if (!resolved)
      throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA_TYPE, `Unsupported file type ${contentType ?? ''} for field ${fieldId}`.trim());
    const key = uploadBlobKey(kbid, rid, fieldId, skipStore);
    const stat = await this.blobs.put(key, Buffer.from(payload, 'base64'), { contentType: resolved });
    return { uri: `blob:${key}`, size: stat.size, md5: stat.md5 ?? '', content_type: resolved };
  }

  /**
   * Stores every inline (base64) file of a create/modify body and rewrites it to its blob uri.
   * Returns the keys written, for the caller to discard if the write then fails.
   */
  async stageInlineFiles(
    kbid: string,
    rid: string,
    files: Record<string, FileFieldInputDto> | undefined,
    skipStore = false,
  ): Promise<{ files?: Record<string, FileFieldInputDto>; keys: string[]; sizes: Record<string, number> }> {
    if (!files || !Object.values(files).some((f) => f.file.payload !== undefined)) return { files, keys: [], sizes: {} };
    const out: Record<string, FileFieldInputDto> = {};
    const keys: string[] = [];
    const sizes: Record<string, number> = {};
    try {
      for (const [fieldId, field] of Object.entries(files)) {
        if (field.file.payload === undefined) {
          out[fieldId] = field;
          continue;
        }
        const stored = await this.storeInlinePayload(
          kbid,
          rid,
          fieldId,
          field.file.payload,
          field.file.content_type,
          field.file.filename,
          skipStore,
        );
        keys.push(stored.uri.slice('blob:'.length));
        sizes[fieldId] = stored.size;
        const { payload: _payload, ...file } = field.file;
        out[fieldId] = { ...field, file: { ...file, uri: stored.uri, content_type: stored.content_type, md5: stored.md5 } };
      }
    } catch (err) {
      for (const key of keys) await this.discard(key);
      throw err;
    }
    return { files: out, keys, sizes };
  }

  async discard(prefixOrKey: string): Promise<void> {
    await (prefixOrKey.endsWith('/') ? this.blobs.deletePrefix(prefixOrKey) : this.blobs.delete(prefixOrKey)).catch(() => undefined);
  }
}
