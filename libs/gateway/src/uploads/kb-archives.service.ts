import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import {
  AccountsSubjects,
  ContentSubjects,
  DomainError,
  ErrorCodes,
  stagedImportKey,
  type BackupCreatedDto,
  type BackupRestoredDto,
  type BusContext,
  type KbImportCreatedDto,
  type KbUploadLimitsDto,
  type NewImportedKbDto,
  type RestoreBackupDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';

/** Learning-configuration members the account service derives from the models: not part of an archive. */
const DERIVED_LEARNING = [
  'user_keys',
  'semantic_model',
  'semantic_vector_similarity',
  'semantic_vector_size',
  'semantic_matryoshka_dims',
  'semantic_threshold',
  'semantic_model_configs',
  'resource_labelers_models',
  'paragraph_labelers_models',
  'intent_models',
];

/** The larger of an account's two file limits (-1, unlimited, wins). */
const largest = (l: KbUploadLimitsDto): number =>
  l.upload_limit_max_media_file_size < 0 || l.upload_limit_max_non_media_file_size < 0
    ? -1
    : Math.max(l.upload_limit_max_media_file_size, l.upload_limit_max_non_media_file_size);

export interface ArchiveUpload {
  body: Readable;
  declaredSize?: number;
  context: BusContext;
}

/**
 * The edge of KB export and import: the KB's configuration (secrets removed) handed to content for
 * the archive, uploaded archives streamed to the blob store within the account's file limit (bytes
 * never ride the bus), and a new KB created from an archive's configuration.
 */
@Injectable()
export class KbArchivesService {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  /** What `kb.json` holds: the KB's record and learning configuration, without any secret. */
  async kbConfig(accountId: string, kbid: string, context: BusContext): Promise<Record<string, unknown>> {
    const kb = await this.bus.request(AccountsSubjects.getKb, { account_id: accountId, kb_id: kbid }, { context });
    const learning = await this.bus.request(AccountsSubjects.getKbConfig, { kb_id: kbid }, { context });
    const kept = Object.fromEntries(Object.entries(learning).filter(([k]) => !DERIVED_LEARNING.includes(k)));
    return {
      slug: kb.slug,
      title: kb.title,
      description: kb.description,
      allowed_origins: kb.allowed_origins,
      search_configs: kb.search_configs,
      learning_configuration: kept,
    };
  }

  /** `POST /kb/{kbid}/import`: the archive is staged, then imported in the background. */
  async importInto(kbid: string, upload: ArchiveUpload): Promise<KbImportCreatedDto> {
    const limit = largest(await this.bus.request(AccountsSubjects.kbUploadLimits, { kb_id: kbid }, { context: upload.context }));
    const { importId, size } = await this.stage(upload, limit);
    return this.start(kbid, importId, size, limit, upload.context);
  }

  /** `POST /kbs/import`: a new KB in the caller's account (the one they own, or `account_id`), configured as the archive says. */
  async importAsNewKb(userId: string, account: string | undefined, upload: ArchiveUpload): Promise<NewImportedKbDto> {
    const accountId = await this.ownedAccount(userId, account, upload.context);
    const limit = largest(
      await this.bus.request(AccountsSubjects.accountUploadLimits, { account_id: accountId }, { context: upload.context }),
    );
    const { importId, size } = await this.stage(upload, limit);
    let created: { uuid: string; slug: string };
    try {
      const head = await this.bus.request(ContentSubjects.peekKbArchive, { import_id: importId }, { context: upload.context });
      created = await this.createKb(userId, accountId, head.kb, upload.context);
    } catch (err) {
      await this.blobs.delete(stagedImportKey(importId)).catch(() => undefined);
      throw err;
    }
    await this.start(created.uuid, importId, size, limit, upload.context);
    return { kbid: created.uuid, slug: created.slug, import_id: importId };
  }

  /** `POST /account/{id}/backups`: a backup of one of the account's KBs (404 for a KB outside it). */
  async backup(accountId: string, kbid: string, context: BusContext): Promise<BackupCreatedDto> {
    const kb = await this.bus.request(AccountsSubjects.getKb, { account_id: accountId, kb_id: kbid }, { context });
    const kbConfig = await this.kbConfig(accountId, kbid, context);
    return this.bus.request(
      ContentSubjects.startBackup,
      { account_id: kb.account_id, kb_config: kbConfig, kb_data: { id: kb.id, slug: kb.slug, title: kb.title, created: kb.created } },
      { context },
    );
  }

  /** `POST /account/{id}/backup/{backup_id}/restore`: a new KB with the given slug and title, filled from the backup. */
  async restore(
    accountId: string,
    userId: string | undefined,
    backupId: string,
    body: RestoreBackupDto,
    context: BusContext,
  ): Promise<BackupRestoredDto> {
    const limit = largest(await this.bus.request(AccountsSubjects.accountUploadLimits, { account_id: accountId }, { context }));
    const staged = await this.bus.request(ContentSubjects.stageRestore, { account_id: accountId, backup_id: backupId }, { context });
    let kbid: string;
    try {
      const head = await this.bus.request(ContentSubjects.peekKbArchive, { import_id: staged.import_id }, { context });
      const kb = { ...head.kb, slug: body.slug, title: body.title };
      kbid = (
        await this.bus.request(
          AccountsSubjects.createKb,
          { account_id: accountId, ...(userId ? { actor_user_id: userId } : {}), body: this.newKbBody(kb) },
          { context },
        )
      ).id;
    } catch (err) {
      await this.blobs.delete(stagedImportKey(staged.import_id)).catch(() => undefined);
      throw err;
    }
    await this.start(kbid, staged.import_id, staged.size_bytes, limit, context);
    return { id: kbid, import_id: staged.import_id };
  }

  private async stage(upload: ArchiveUpload, limit: number): Promise<{ importId: string; size: number }> {
    if (upload.declaredSize !== undefined && limit >= 0 && upload.declaredSize > limit) {
      throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `The archive is larger than this account's limit of ${limit} bytes`);
    }
    const importId = randomUUID();
    const stat = await this.blobs.put(stagedImportKey(importId), upload.body, {
      contentType: 'application/gzip',
      ...(limit >= 0 ? { maxBytes: limit } : {}),
    });
    if (stat.size === 0) {
      await this.blobs.delete(stagedImportKey(importId));
      throw DomainError.validation([{ loc: ['body'], msg: 'The body must be a Knowledge Box archive (a gzipped tar)', type: 'missing' }]);
    }
    return { importId, size: stat.size };
  }

  private async start(kbid: string, importId: string, size: number, limit: number, context: BusContext): Promise<KbImportCreatedDto> {
    try {
      return await this.bus.request(
        ContentSubjects.startKbImport,
        { kbid, import_id: importId, max_blob_bytes: limit, size_bytes: size },
        { context },
      );
    } catch (err) {
      await this.blobs.delete(stagedImportKey(importId)).catch(() => undefined);
      throw err;
    }
  }

  private async ownedAccount(userId: string, requested: string | undefined, context: BusContext): Promise<string> {
    const accounts = await this.bus.request(AccountsSubjects.listAccounts, { user_id: userId }, { context });
    if (requested !== undefined) {
      const found = accounts.find((a) => a.id === requested || a.slug === requested);
      if (!found) throw new DomainError(ErrorCodes.ACCOUNT_NOT_FOUND, 'Account not found');
      if (found.role !== 'AOWNER')
        throw new DomainError(ErrorCodes.FORBIDDEN, 'Creating a Knowledge Box needs the account owner role (AOWNER)');
      return found.id;
    }
    const owned = accounts.filter((a) => a.role === 'AOWNER');
    if (owned.length === 1) return (owned[0] as { id: string }).id;
    const msg =
      owned.length === 0
        ? 'You own no account to create the Knowledge Box in'
        : `You own ${owned.length} accounts: name the one to create the Knowledge Box in`;
    throw DomainError.validation([{ loc: ['query', 'account_id'], msg, type: 'missing' }]);
  }

  /** A new KB's members from an archive's configuration: its semantic models are chosen only at creation. */
  private newKbBody(kb: Record<string, unknown>): {
    title: string;
    slug?: string;
    description?: string;
    allowed_origins?: string[];
    learning_configuration: Record<string, unknown>;
  } {
    const learning = (kb['learning_configuration'] ?? {}) as Record<string, unknown>;
    const models = Array.isArray(learning['semantic_models'])
      ? {
          semantic_models: learning['semantic_models'] as string[],
          ...(typeof learning['default_semantic_model'] === 'string' ? { default_semantic_model: learning['default_semantic_model'] } : {}),
        }
      : {};
    return {
      title: typeof kb['title'] === 'string' ? kb['title'] : 'Imported Knowledge Box',
      ...(typeof kb['slug'] === 'string' ? { slug: kb['slug'] } : {}),
      ...(typeof kb['description'] === 'string' ? { description: kb['description'] } : {}),
      ...(Array.isArray(kb['allowed_origins']) ? { allowed_origins: kb['allowed_origins'] as string[] } : {}),
      learning_configuration: models,
    };
  }

  /** The archive's slug when it is free in the account, else the slug with a random suffix. */
  private async createKb(
    userId: string,
    accountId: string,
    kb: Record<string, unknown>,
    context: BusContext,
  ): Promise<{ uuid: string; slug: string }> {
    const { slug, ...body } = this.newKbBody(kb);
    const request = (s: string | undefined) =>
      this.bus.request(
        AccountsSubjects.createKbForCaller,
        { user_id: userId, body: { ...body, account_id: accountId, ...(s ? { slug: s } : {}) } },
        { context },
      );
    try {
      return await request(slug);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== ErrorCodes.KB_SLUG_CONFLICT || !slug) throw err;
      return request(`${slug.slice(0, 240)}-${randomUUID().slice(0, 8)}`);
    }
  }
}
