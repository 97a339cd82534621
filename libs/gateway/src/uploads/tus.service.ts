import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { AccountsSubjects, DomainError, ErrorCodes, type ActorDto, type BusContext, type CreateResourceDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { decodeFilename, isMedia, resolveContentType } from './media-types';
import { ProcessingUploadService } from './processing-upload.service';
import { UploadService, type UploadStrategies } from './upload.service';

/** What a TUS upload remembers between requests; kept in the blob store so any gateway replica can continue it. */
interface TusState {
  id: string;
  /** The key namespace: the KB's id, or `processing:<account>` for the understanding API. */
  ns: string;
  /** A KB upload (ends as a resource's file) or… */
  kbid?: string;
  /** …an understanding-API upload (ends as a staged file and its token). */
  account?: string;
  target?: { rid?: string; slug?: string };
  fieldId?: string;
  length?: number;
  offset: number;
  parts: { key: string; size: number }[];
  metadata: Record<string, string>;
  resource?: CreateResourceDto;
  /**
   * The account's upload limit for this file (its type from the metadata, else the larger of the
   * media and non-media limits): bounds a deferred-length upload as a declared length is bounded.
   */
  maxBytes?: number;
  /** `x-skip-store: true` on the creation request (or on the last chunk). */
  skipStore?: boolean;
  /** `x-extract-strategy` / `x-split-strategy` of the creation request (KB uploads). */
  strategies?: UploadStrategies;
  created: string;
}

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,creation-defer-length';

const tooLarge = (maxBytes: number) =>
  new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `The file is larger than this account's limit of ${maxBytes} bytes`);

export const TUS_PREFIX = 'gateway/tus/';
const dirOf = (ns: string, id: string) => `${TUS_PREFIX}${ns}/${id}/`;
const stateKey = (ns: string, id: string) => `${dirOf(ns, id)}state.json`;
const partKey = (ns: string, id: string, offset: number) => `${dirOf(ns, id)}part-${String(offset).padStart(15, '0')}`;

/** Where the uploads of a KB, or of an understanding-API client's account, keep their state. */
export const tusNamespace = (target: { kbid: string } | { account: string }): string =>
  'kbid' in target ? target.kbid : `processing:${target.account}`;

/** The result of the last chunk: the resource file written, or the token of the staged file. */
export type TusResult = { seqid: number; uuid: string; field_id: string } | string;

/** `Upload-Metadata: key base64,key base64` (values optional). */
export function parseUploadMetadata(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key, value] = pair.split(/\s+/, 2) as [string, string | undefined];
    if (!/^[A-Za-z0-9_.-]+$/.test(key))
      throw DomainError.validation([{ loc: ['header', 'upload-metadata'], msg: `Malformed metadata key "${key}"`, type: 'value_error' }]);
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))
      throw DomainError.validation([
        { loc: ['header', 'upload-metadata', key], msg: 'Metadata values must be base64', type: 'value_error' },
      ]);
    out[key] = value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}

/**
 * TUS 1.0.0 resumable uploads (creation, creation-defer-length). Chunks are stored as parts; the
 * last chunk streams the parts, in order, through the normal upload path, then the parts go.
 */
@Injectable()
export class TusService {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly uploads: UploadService,
    private readonly processingUploads: ProcessingUploadService,
  ) {}

  async create(input: {
    owner: { kbid: string } | { account: string };
    target?: { rid?: string; slug?: string };
    fieldId?: string;
    length?: number;
    deferLength: boolean;
    metadata: Record<string, string>;
    resource?: CreateResourceDto;
    skipStore?: boolean;
    strategies?: UploadStrategies;
    context: BusContext;
  }): Promise<TusState> {
    if (input.length === undefined && !input.deferLength) {
      throw DomainError.validation([
        { loc: ['header', 'upload-length'], msg: 'Upload-Length or Upload-Defer-Length: 1 is required', type: 'missing' },
      ]);
    }
    // An upload into a field needs its resource now, not after the client sent every byte.
    if (input.target && 'kbid' in input.owner) await this.uploads.existingResource(input.owner.kbid, input.target, input.context);
    // So are the strategies it names: refused now, not after the last chunk.
    if ('kbid' in input.owner) await this.uploads.assertStrategies(input.owner.kbid, input.strategies, input.context);
    const maxBytes = await this.sizeLimit(input.owner, input.metadata, input.context);
    if (input.length !== undefined && maxBytes !== undefined && input.length > maxBytes) throw tooLarge(maxBytes);
    const state: TusState = {
      id: randomBytes(16).toString('hex'),
      ns: tusNamespace(input.owner),
      ...input.owner,
      target: input.target,
      fieldId: input.fieldId,
      length: input.length,
      offset: 0,
      parts: [],
      metadata: input.metadata,
      resource: input.resource,
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      ...(input.skipStore ? { skipStore: true } : {}),
      ...(input.strategies && Object.keys(input.strategies).length > 0 ? { strategies: input.strategies } : {}),
      created: new Date().toISOString(),
    };
    await this.save(state);
    return state;
  }

  async status(ns: string, id: string): Promise<TusState> {
    return this.load(ns, id);
  }

  /** Appends one chunk at `offset`; returns the new state and, after the last chunk, the upload result. */
  async append(
    ns: string,
    id: string,
    offset: number,
    length: number | undefined,
    body: Readable,
    actor: ActorDto,
    context: BusContext,
    skipStore = false,
  ): Promise<{ state: TusState; done?: TusResult }> {
    const state = await this.load(ns, id);
    if (offset !== state.offset)
      throw new DomainError(ErrorCodes.CONFLICT, `Upload-Offset ${offset} does not match the current offset ${state.offset}`, {
        offset: state.offset,
      });
    if (length !== undefined) {
      if (state.length !== undefined && state.length !== length)
        throw DomainError.validation([{ loc: ['header', 'upload-length'], msg: 'Upload-Length cannot change', type: 'value_error' }]);
      if (state.maxBytes !== undefined && length > state.maxBytes) return this.abandon(state, tooLarge(state.maxBytes));
      state.length = length;
    }
    // A deferred length is bounded by the limit too: the bytes so far may not pass it.
    const remaining =
      state.length !== undefined ? state.length - state.offset : state.maxBytes !== undefined ? state.maxBytes - state.offset : undefined;
    const key = partKey(ns, id, state.offset);
    let stat: { size: number };
    try {
      stat = await this.blobs.put(key, body, remaining !== undefined ? { maxBytes: remaining } : {});
    } catch (err) {
      // Past the account's limit the upload can never complete: its parts go now, not when swept.
      if (
        state.length === undefined &&
        err instanceof DomainError &&
        err.code === ErrorCodes.PAYLOAD_TOO_LARGE &&
        state.maxBytes !== undefined
      )
        return this.abandon(state, tooLarge(state.maxBytes));
      throw err;
    }
    state.parts.push({ key, size: stat.size });
    state.offset += stat.size;
    await this.save(state);
    if (state.length === undefined || state.offset < state.length) return { state };

    const m = state.metadata;
    const file = {
      body: Readable.from(this.concat(state.parts)),
      declaredSize: state.length,
      declaredType: m['content_type'] ?? m['filetype'],
      filename: decodeFilename(m['filename'] ?? m['name']),
      md5: m['md5'] || undefined,
      password: m['password'] || undefined,
      language: m['language'] || undefined,
      context,
    };
    try {
      const done: TusResult = state.account
        ? await this.processingUploads.stage({ accountId: state.account, ...file })
        : await this.uploads.upload({
            kbid: state.kbid ?? ns,
            target: state.target,
            fieldId: state.fieldId,
            resource: state.resource,
            skipStore: state.skipStore === true || skipStore,
            ...(state.strategies ? { strategies: state.strategies } : {}),
            actor,
            ...file,
          });
      await this.blobs.deletePrefix(dirOf(ns, id));
      return { state, done };
    } catch (err) {
      // A failed completion is final: the parts are deleted and the client starts again.
      await this.blobs.deletePrefix(dirOf(ns, id)).catch(() => undefined);
      throw err;
    }
  }

  /** The account's size limit for what the metadata says the file is; undefined when unlimited. */
  private async sizeLimit(
    owner: { kbid: string } | { account: string },
    m: Record<string, string>,
    context: BusContext,
  ): Promise<number | undefined> {
    const limits = await ('kbid' in owner
      ? this.bus.request(AccountsSubjects.kbUploadLimits, { kb_id: owner.kbid }, { context })
      : this.bus.request(AccountsSubjects.accountUploadLimits, { account_id: owner.account }, { context }));
    const media = limits.upload_limit_max_media_file_size;
    const other = limits.upload_limit_max_non_media_file_size;
    const type = resolveContentType(m['content_type'] ?? m['filetype'], decodeFilename(m['filename'] ?? m['name']));
    const limit = type ? (isMedia(type) ? media : other) : media < 0 || other < 0 ? -1 : Math.max(media, other);
    return limit >= 0 ? limit : undefined;
  }

  private async abandon(state: TusState, err: DomainError): Promise<never> {
    await this.blobs.deletePrefix(dirOf(state.ns, state.id)).catch(() => undefined);
    throw err;
  }

  private async *concat(parts: { key: string }[]): AsyncGenerator<Buffer> {
    for (const part of parts) {
      const { body } = await this.blobs.get(part.key);
      for await (const chunk of body) yield chunk as Buffer;
    }
  }

  private async load(ns: string, id: string): Promise<TusState> {
    if (!/^[0-9a-f]{32}$/.test(id) || !(await this.blobs.exists(stateKey(ns, id))))
      throw new DomainError(ErrorCodes.NOT_FOUND, 'Upload not found or already finished');
    const { body } = await this.blobs.get(stateKey(ns, id));
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    // States written before namespaces existed are KB uploads keyed by the KB's id.
    return { ns, ...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Omit<TusState, 'ns'>) };
  }

  private async save(state: TusState): Promise<void> {
    await this.blobs.put(stateKey(state.ns, state.id), Buffer.from(JSON.stringify(state)), { contentType: 'application/json' });
  }
}
