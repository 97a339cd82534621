import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DomainError, ErrorCodes } from '@kb/contracts';
import { BLOB_STORE, PRESIGNED_BLOB_PATH, type BlobStore } from '@kb/platform/storage';
import { sendBlob } from '../http/blob-response';

/**
 * The links the fs blob driver signs (`presignGet`: activity downloads, for instance), served with
 * no credential: the signature covers the object, the expiry, the file name and inline/attachment,
 * so a link opens exactly the one object it was made for until it expires. (With the S3 driver the
 * links point at S3 and this route answers nothing.)
 */
@ApiTags('Files')
@Controller(PRESIGNED_BLOB_PATH.replace(/^\//, ''))
export class PresignedBlobsController {
  constructor(@Inject(BLOB_STORE) private readonly blobs: BlobStore) {}

  @Get('*key')
  @ApiOperation({
    summary: 'Download a file by a signed link',
    description: 'A link given by the service (e.g. Get Download Status `download_url`), valid until `expires`; Range supported.',
  })
  @ApiResponse({ status: 200, description: 'The file' })
  @ApiResponse({ status: 401, description: 'The link is malformed, altered or expired' })
  async get(@Req() req: Request, @Res() res: Response): Promise<void> {
    const key = req.path
      .slice(PRESIGNED_BLOB_PATH.length + 1)
      .split('/')
      .map((part) => decodeURIComponent(part))
      .join('/');
    const verdict = this.blobs.verifyPresignedGet(key, req.query as Record<string, string | string[] | undefined>);
    // The signature is the credential: a link altered, made for another object or expired is 401, like a bad key.
    if (!verdict.valid)
      throw new DomainError(ErrorCodes.UNAUTHENTICATED, verdict.reason === 'expired' ? 'This link has expired' : 'This link is not valid');
    await sendBlob(this.blobs, req, res, { key, filename: verdict.filename ?? key.split('/').pop() ?? 'download', inline: verdict.inline });
  }
}
