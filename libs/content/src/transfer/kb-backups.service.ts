import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  DomainError,
  ErrorCodes,
  stagedImportKey,
  type AccountBackupRef,
  type AccountBackupsRef,
  type AccountDeletedEvent,
  type BackupCreatedDto,
  type BackupDto,
  type StagedRestoreDto,
  type StartBackupRequest,
} from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { OutboxService } from '../outbox/outbox.service';
import { UUID } from './archive-format';
import { KbTransfersService } from './kb-transfers.service';

/** Backups of an account kept at once: more is refused until some are deleted. */
const MAX_BACKUPS_PER_ACCOUNT = 100;

/** Backups live under the account, not the KB: deleting the KB keeps them for a restore; deleting the account removes them. */
export const backupBlobPrefix = (accountId: string) => `content/backups/${accountId}/`;
export const backupBlobKey = (accountId: string, id: string) => `${backupBlobPrefix(accountId)}${id}.tar.gz`;

interface BackupRow {
  id: string;
  kbid: string;
  account_id: string;
  status: string;
  params: { kb_data?: BackupDto['kb_data'] };
  size_bytes: string | number | null;
  error: string | null;
  created_at: Date | string;
  finished_at: Date | string | null;
  blob_key: string;
}

/**
 * Account backups (API-MAP 1.4, the reference's `sdk/backup.py`): an export of one KB of the account,
 * written by the same job as an export but kept until the account deletes it, even after the KB is
 * gone; a restore copies it to a new import's staging key, for the gateway to create the KB and
 * import into it.
 */
@Injectable()
export class KbBackupsService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly transfers: KbTransfersService,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * A deleted account's backups go: their records, then (through the outbox, retried until done)
   * every file under the account's backup prefix. A backup still being written finds its record
   * gone when it ends and deletes its own file (KbTransfersService.runExport).
   */
  async onAccountDeleted(event: AccountDeletedEvent): Promise<void> {
    if (!UUID.test(event.account_id)) return;
    const rows = await this.ds.transaction(async (m) => {
      await m.query(`DELETE FROM content.kb_transfers WHERE kind = 'backup' AND account_id = $1`, [event.account_id]);
      return this.outbox.add(m, [{ kind: 'blob_cleanup', target: backupBlobPrefix(event.account_id) }]);
    });
    await this.outbox.relay(rows);
  }

  async start(req: StartBackupRequest): Promise<BackupCreatedDto> {
    const [kept] = (await this.ds.query(`SELECT count(*)::int AS n FROM content.kb_transfers WHERE kind = 'backup' AND account_id = $1`, [
      req.account_id,
    ])) as { n: number }[];
    if ((kept?.n ?? 0) >= MAX_BACKUPS_PER_ACCOUNT)
      throw new DomainError(ErrorCodes.QUOTA_EXCEEDED, `An account keeps at most ${MAX_BACKUPS_PER_ACCOUNT} backups: delete some first`);
    const id = randomUUID();
    await this.transfers.record(
      id,
      req.kb_data.id,
      'backup',
      backupBlobKey(req.account_id, id),
      { kb_config: req.kb_config, kb_data: req.kb_data },
      req.account_id,
    );
    return { id };
  }

  async list(ref: AccountBackupsRef): Promise<BackupDto[]> {
    if (!UUID.test(ref.account_id)) return [];
    const rows = (await this.ds.query(
      `SELECT * FROM content.kb_transfers WHERE kind = 'backup' AND account_id = $1 ORDER BY created_at DESC LIMIT ${MAX_BACKUPS_PER_ACCOUNT}`,
      [ref.account_id],
    )) as BackupRow[];
    return rows.map(dto);
  }

  async delete(ref: AccountBackupRef): Promise<Record<string, never>> {
    const row = await this.find(ref);
    await this.ds.query(`DELETE FROM content.kb_transfers WHERE id = $1`, [row.id]);
    await this.blobs.delete(row.blob_key);
    return {};
  }

  /** Copies a finished backup to a new import's staging key. */
  async stageRestore(ref: AccountBackupRef): Promise<StagedRestoreDto> {
    const row = await this.find(ref);
    if (row.status !== 'finished') throw new DomainError(ErrorCodes.CONFLICT, `The backup is ${row.status}, not finished`);
    const importId = randomUUID();
    await this.blobs.copy(row.blob_key, stagedImportKey(importId));
    return { import_id: importId, size_bytes: Number(row.size_bytes ?? 0) };
  }

  private async find(ref: AccountBackupRef): Promise<BackupRow> {
    if (!UUID.test(ref.account_id) || !UUID.test(ref.backup_id)) throw new DomainError(ErrorCodes.NOT_FOUND, 'Backup not found');
    const [row] = (await this.ds.query(`SELECT * FROM content.kb_transfers WHERE id = $1 AND kind = 'backup' AND account_id = $2`, [
      ref.backup_id,
      ref.account_id,
    ])) as BackupRow[];
    if (!row) throw new DomainError(ErrorCodes.NOT_FOUND, 'Backup not found');
    return row;
  }
}

function dto(row: BackupRow): BackupDto {
  const iso = (v: Date | string) => new Date(v).toISOString();
  return {
    id: row.id,
    account_id: row.account_id,
    started_at: iso(row.created_at),
    kb_data: row.params.kb_data ?? { id: row.kbid, slug: '', title: '', created: iso(row.created_at) },
    finished_at: row.status === 'finished' && row.finished_at ? iso(row.finished_at) : null,
    size: row.status === 'finished' && row.size_bytes !== null ? Number(row.size_bytes) : null,
    error: row.status === 'errored' ? row.error : null,
  };
}
