import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ContentSubjects, KbExportCreatedDto, KbImportCreatedDto, KbTransferStatusDto, NewImportedKbDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import type { AuthedRequest } from '../auth/auth.guard';
import { sendBlob } from '../http/blob-response';
import { busContextOf } from '../http/request-context';
import { KbArchivesService, type ArchiveUpload } from '../uploads/kb-archives.service';
import { header } from './uploads.controller';

const FORMAT = 'The archive is a gzipped tar of JSON Lines and stored files, documented in docs/export-format.md.';

function uploadOf(req: AuthedRequest): ArchiveUpload {
  const length = header(req, 'content-length');
  return {
    body: req,
    declaredSize: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
    context: busContextOf(req).context,
  };
}

/**
 * Export and import of Knowledge Boxes (API-MAP 3 "Export / import"): managers of the KB only —
 * an archive holds every resource, file and setting of the KB, and an import writes all of them.
 */
@ApiTags('Knowledge Boxes')
@Controller('api/v1')
export class KbTransfersController {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly archives: KbArchivesService,
  ) {}

  @Post('kb/:kbid/export')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start An Export',
    description: `Writes an archive of the KB in the background. ${FORMAT} Poll the status, then download it (kept 7 days).`,
  })
  @ApiResponse({ status: 200, type: KbExportCreatedDto })
  @ApiResponse({ status: 429, description: 'Three exports or imports of this KB are already under way' })
  async startExport(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbExportCreatedDto> {
    const ctx = busContextOf(req);
    const kbConfig = await this.archives.kbConfig(req.grant?.account_id ?? '', kbid, ctx.context);
    return this.bus.request(ContentSubjects.startKbExport, { kbid, kb_config: kbConfig }, ctx);
  }

  @Get('kb/:kbid/export/:export_id/status')
  @ApiOperation({ summary: 'Get Export Status' })
  @ApiResponse({ status: 200, type: KbTransferStatusDto })
  exportStatus(@Param('kbid') kbid: string, @Param('export_id') id: string, @Req() req: AuthedRequest): Promise<KbTransferStatusDto> {
    return this.bus.request(ContentSubjects.kbExportStatus, { kbid, id }, busContextOf(req));
  }

  @Get('kb/:kbid/export/:export_id')
  @ApiOperation({
    summary: 'Download An Export',
    description: `The archive, streamed (Range supported). 409 until the export is finished. ${FORMAT}`,
  })
  @ApiResponse({ status: 200, description: 'The archive (a gzipped tar)' })
  @ApiResponse({ status: 409, description: 'The export is not finished' })
  async download(
    @Param('kbid') kbid: string,
    @Param('export_id') id: string,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.bus.request(ContentSubjects.kbExportFile, { kbid, id }, busContextOf(req));
    await sendBlob(this.blobs, req, res, { key: file.blob_key, filename: file.filename, contentType: 'application/gzip', inline: false });
  }

  @Post('kb/:kbid/import')
  @HttpCode(200)
  @ApiConsumes('application/octet-stream')
  @ApiOperation({
    summary: 'Start An Import',
    description: `Imports an archive (the raw body, any content type) into this KB in the background; nothing is written unless the whole archive is valid, and a failure removes what the import wrote. The archive may be as large as the account's largest file limit. ${FORMAT}`,
  })
  @ApiResponse({ status: 200, type: KbImportCreatedDto })
  @ApiResponse({ status: 413, description: "The archive is larger than the account's file limit" })
  importInto(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbImportCreatedDto> {
    return this.archives.importInto(kbid, uploadOf(req));
  }

  @Get('kb/:kbid/import/:import_id/status')
  @ApiOperation({ summary: 'Get Import Status' })
  @ApiResponse({ status: 200, type: KbTransferStatusDto })
  importStatus(@Param('kbid') kbid: string, @Param('import_id') id: string, @Req() req: AuthedRequest): Promise<KbTransferStatusDto> {
    return this.bus.request(ContentSubjects.kbImportStatus, { kbid, id }, busContextOf(req));
  }

  @Post('kbs/import')
  @HttpCode(200)
  @ApiConsumes('application/octet-stream')
  @ApiQuery({ name: 'account_id', required: false, description: 'Account (id or slug) for the new KB; needed only when you own several' })
  @ApiOperation({
    summary: 'Create A Knowledge Box From An Export',
    description: `Creates a KB configured as the archive says (its slug when free, title, description, semantic models; never secrets) and imports the archive into it in the background. ${FORMAT}`,
  })
  @ApiResponse({ status: 200, type: NewImportedKbDto })
  importAsNewKb(@Query('account_id') account: unknown, @Req() req: AuthedRequest): Promise<NewImportedKbDto> {
    return this.archives.importAsNewKb(
      req.principal?.user_id ?? '',
      typeof account === 'string' && account ? account : undefined,
      uploadOf(req),
    );
  }
}
