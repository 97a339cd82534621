import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { BackupCreatedDto, BackupDto, BackupRestoredDto, ContentSubjects, CreateBackupDto, RestoreBackupDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';
import { KbArchivesService } from '../uploads/kb-archives.service';

/**
 * Account backups (API-MAP 1.4; the reference's `sdk/backup.py`): a backup is an archive of one KB of
 * the account (docs/export-format.md), made in the background, kept until deleted (also after its KB
 * is deleted), and restored into a new KB of the account. Account owners only.
 */
@ApiTags('Accounts')
@Controller('api/v1/account/:account_id')
export class AccountBackupsController {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly archives: KbArchivesService,
  ) {}

  private account(req: AuthedRequest, param: string): string {
    return req.grant?.account_id ?? param;
  }

  @Post('backups')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create A Backup',
    description:
      'Backs up one KB of the account in the background; `finished_at` and `size` appear in the list once it is complete. At most 100 backups per account.',
  })
  @ApiResponse({ status: 201, type: BackupCreatedDto })
  create(
    @Param('account_id') account: string,
    @Body(bodyOf(CreateBackupDto)) body: CreateBackupDto,
    @Req() req: AuthedRequest,
  ): Promise<BackupCreatedDto> {
    return this.archives.backup(this.account(req, account), body.kb_id, busContextOf(req).context);
  }

  @Get('backups')
  @ApiOperation({ summary: 'List Backups', description: "The account's backups, newest first." })
  @ApiResponse({ status: 200, type: [BackupDto] })
  list(@Param('account_id') account: string, @Req() req: AuthedRequest): Promise<BackupDto[]> {
    return this.bus.request(ContentSubjects.listBackups, { account_id: this.account(req, account) }, busContextOf(req));
  }

  @Delete('backup/:backup_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete A Backup' })
  @ApiResponse({ status: 204 })
  async delete(@Param('account_id') account: string, @Param('backup_id') backupId: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(
      ContentSubjects.deleteBackup,
      { account_id: this.account(req, account), backup_id: backupId },
      busContextOf(req),
    );
  }

  @Post('backup/:backup_id/restore')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Restore A Backup',
    description:
      "Creates a KB with the given slug and title (and the backed-up KB's configuration) and imports the backup into it in the background. 409 while the backup is not finished.",
  })
  @ApiResponse({ status: 201, type: BackupRestoredDto })
  restore(
    @Param('account_id') account: string,
    @Param('backup_id') backupId: string,
    @Body(bodyOf(RestoreBackupDto)) body: RestoreBackupDto,
    @Req() req: AuthedRequest,
  ): Promise<BackupRestoredDto> {
    return this.archives.restore(this.account(req, account), req.principal?.user_id, backupId, body, busContextOf(req).context);
  }
}
