import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const KbTransferStatuses = ['scheduled', 'running', 'finished', 'errored'] as const;
export type KbTransferStatus = (typeof KbTransferStatuses)[number];

/** Where the gateway stages an uploaded archive for an import (content reads it, then deletes it). */
export function stagedImportKey(importId: string): string {
  return `content/imports/${importId}.tar.gz`;
}

/** `POST /kb/{kbid}/export` → the job's id (API-MAP 3, "Export / import"). */
export class KbExportCreatedDto {
  @ApiProperty({ format: 'uuid' }) export_id!: string;
}

/** `POST /kb/{kbid}/import` → the job's id. */
export class KbImportCreatedDto {
  @ApiProperty({ format: 'uuid' }) import_id!: string;
}

/** `POST /kbs/import` → the new KB (the reference's `{kbid, slug}`) and its import job. */
export class NewImportedKbDto {
  @ApiProperty({ format: 'uuid' }) kbid!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ format: 'uuid', description: 'Poll GET /api/v1/kb/{kbid}/import/{import_id}/status' }) import_id!: string;
}

/** `GET /kb/{kbid}/export|import/{id}/status`. */
export class KbTransferStatusDto {
  @ApiProperty({ enum: KbTransferStatuses }) status!: KbTransferStatus;
  @ApiProperty({ description: 'Resources to export or import (known once counted)' }) total!: number;
  @ApiProperty({ description: 'Resources exported or imported so far' }) processed!: number;
  @ApiProperty({ description: 'Attempts after the first (a job whose process stopped is taken up again)' }) retries!: number;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Why the job errored' }) error!: string | null;
}

export class StartKbExportRequest {
  @IsDefined() @IsString() @Matches(UUID) kbid!: string;
  /** The KB's configuration as the gateway read it from accounts, secrets removed. */
  @IsDefined() @IsObject() kb_config!: Record<string, unknown>;
}

export class KbTransferRef {
  @IsDefined() @IsString() kbid!: string;
  @IsDefined() @IsString() @MaxLength(64) id!: string;
}

/** Where a finished export is, for the gateway to stream it. */
export class KbExportFileDto {
  blob_key!: string;
  filename!: string;
}

export class StartKbImportRequest {
  @IsDefined() @IsString() @Matches(UUID) kbid!: string;
  @IsDefined() @IsString() @Matches(UUID) import_id!: string;
  /** Largest file the archive may hold (the account's upload limit); -1 for none. */
  @IsDefined() @IsInt() @Min(-1) @Max(Number.MAX_SAFE_INTEGER) max_blob_bytes!: number;
  /** Bytes of the staged archive (its compressed size). */
  @IsDefined() @IsInt() @Min(0) @Max(Number.MAX_SAFE_INTEGER) size_bytes!: number;
}

export class PeekKbArchiveRequest {
  @IsDefined() @IsString() @Matches(UUID) import_id!: string;
  @IsOptional() @IsIn(['peek']) mode?: 'peek';
}

/** The head of a staged archive: its source and the KB configuration it carries. */
export class KbArchiveHeadDto {
  source_kbid!: string;
  kb!: Record<string, unknown>;
}

/** What a backup says of its KB (the reference's `KBDataResponse`), taken when the backup was made. */
export class BackupKbDataDto {
  @ApiProperty({ format: 'uuid' }) @IsString() @Matches(UUID) id!: string;
  @ApiProperty() @IsString() @MaxLength(250) slug!: string;
  @ApiProperty() @IsString() @MaxLength(250) title!: string;
  @ApiProperty({ format: 'date-time' }) @IsString() @MaxLength(64) created!: string;
}

/** `POST /account/{account_id}/backups` body (the reference's `BackupCreate`). */
export class CreateBackupDto {
  @ApiProperty({ format: 'uuid' }) @IsDefined() @IsString() @Matches(UUID, { message: 'kb_id must be a UUID' }) kb_id!: string;
}

/** `POST /account/{account_id}/backups` → (the reference's `BackupCreateResponse`). */
export class BackupCreatedDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
}

/** One backup of `GET /account/{account_id}/backups` (the reference's `BackupResponse`). */
export class BackupDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) account_id!: string;
  @ApiProperty({ format: 'date-time' }) started_at!: string;
  @ApiProperty({ type: BackupKbDataDto }) kb_data!: BackupKbDataDto;
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String, description: 'Set once the backup is complete' }) finished_at!:
    string | null;
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'Bytes of the backup, once complete' }) size!: number | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Why the backup failed (it is then never finished)' }) error!:
    string | null;
}

/** `POST /account/{account_id}/backup/{backup_id}/restore` body (the reference's `BackupRestore`). */
export class RestoreBackupDto {
  @ApiProperty({ pattern: '^[a-z0-9_-]+$' })
  @IsDefined()
  @IsString()
  @MaxLength(250)
  @Matches(/^[a-z0-9_-]+$/, { message: 'slug must match ^[a-z0-9_-]+$' })
  slug!: string;
  @ApiProperty() @IsDefined() @IsString() @MaxLength(250) title!: string;
}

/** `POST …/restore` → the new KB (the reference's `KnowledgeBoxCreated`) and the import filling it. */
export class BackupRestoredDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid', description: 'Poll GET /api/v1/kb/{id}/import/{import_id}/status' }) import_id!: string;
}

export class StartBackupRequest {
  @IsDefined() @IsString() @Matches(UUID) account_id!: string;
  @IsDefined() @IsObject() kb_config!: Record<string, unknown>;
  @IsDefined() @IsObject() kb_data!: BackupKbDataDto;
}

export class AccountBackupsRef {
  @IsDefined() @IsString() @MaxLength(64) account_id!: string;
}

export class AccountBackupRef extends AccountBackupsRef {
  @IsDefined() @IsString() @MaxLength(64) backup_id!: string;
}

/** A finished backup copied to the staging key of a new import (content answers its id and size). */
export class StagedRestoreDto {
  import_id!: string;
  size_bytes!: number;
}
