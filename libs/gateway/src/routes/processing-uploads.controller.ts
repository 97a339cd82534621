import { Controller, Head, HttpCode, Options, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiExcludeEndpoint, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DomainError } from '@kb/contracts';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';
import { decodeFilename } from '../uploads/media-types';
import { isMultipart, readMultipartFile } from '../uploads/multipart';
import { ProcessingUploadService } from '../uploads/processing-upload.service';
import { TusService, tusNamespace } from '../uploads/tus.service';
import { tusRoutes } from './tus.controller';
import { header } from './uploads.controller';

const accountOf = (req: AuthedRequest): string => req.principal?.account_id ?? '';

/**
 * The understanding API's file uploads (spec 4.5, API-MAP §1.5): Upload Binary File and its TUS
 * family. Each answers with a token (a JSON string) that a push names in `filefield` or in a
 * message's `attachments`; the file waits under the client's account until then (24 hours).
 */
@ApiTags('Understanding API')
@Controller('api/v1/processing')
export class ProcessingUploadsController {
  constructor(
    private readonly uploads: ProcessingUploadService,
    private readonly tus: TusService,
  ) {}

  @Post('upload')
  @HttpCode(201)
  @ApiConsumes('application/octet-stream', 'multipart/form-data')
  @ApiHeader({ name: 'x-filename', required: false, description: 'plain, URL-encoded or base64' })
  @ApiHeader({ name: 'x-md5', required: false, description: 'md5 of the file, checked against the bytes received' })
  @ApiHeader({ name: 'x-password', required: false, description: 'password of a protected PDF' })
  @ApiHeader({ name: 'x-language', required: false })
  @ApiOperation({
    summary: 'Upload Binary File',
    description:
      "Streams the file (the raw body, or the first file part of a multipart/form-data body) to storage and answers 201 with a token (a JSON string) for `filefield` or message `attachments` of Send Data To Process. A token is used by one push; an unused file expires after 24 hours. Unsupported type → 415, over the account's upload limit → 413.",
  })
  @ApiResponse({ status: 201, schema: { type: 'string', description: 'The upload token' } })
  async upload(@Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const common = {
      accountId: accountOf(req),
      md5: header(req, 'x-md5'),
      password: header(req, 'x-password'),
      language: header(req, 'x-language'),
      context: busContextOf(req).context,
    };
    let token: string;
    if (isMultipart(header(req, 'content-type'))) {
      // The spec's multipart upload: the first file part is the file; x-filename still wins.
      const part = await readMultipartFile(req);
      try {
        token = await this.uploads.stage({
          ...common,
          body: part.stream,
          declaredType: part.mimeType,
          filename: decodeFilename(header(req, 'x-filename')) ?? part.filename,
        });
      } catch (err) {
        part.stream.resume();
        if (part.broken())
          throw DomainError.validation([
            { loc: ['body'], msg: 'Malformed multipart body: the file part was cut short', type: 'value_error' },
          ]);
        throw err;
      }
      await part.finished.catch(() => undefined);
    } else {
      const length = header(req, 'content-length');
      token = await this.uploads.stage({
        ...common,
        body: req,
        declaredType: header(req, 'content-type'),
        filename: decodeFilename(header(req, 'x-filename')),
        declaredSize: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
      });
    }
    // A JSON string, as the reference clients parse it (not text/plain).
    res.status(201).json(token);
  }

  @Options(['tusupload', 'tusupload/:upload_id'])
  @ApiOperation({ summary: 'Tus Server Information' })
  @ApiExcludeEndpoint()
  info(@Res() res: Response): void {
    tusRoutes.info(res);
  }

  @Post('tusupload')
  @HttpCode(201)
  @ApiOperation({
    summary:
      'TUS: create a resumable upload to process (Upload-Length or Upload-Defer-Length: 1; Upload-Metadata filename,content_type,md5,language,password)',
  })
  async create(@Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    await tusRoutes.create(this.tus, { account: accountOf(req) }, req, res);
  }

  @Head('tusupload/:upload_id')
  @ApiOperation({ summary: 'TUS: current offset of an upload to process' })
  async head(@Param('upload_id') id: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    await tusRoutes.head(this.tus, tusNamespace({ account: accountOf(req) }), id, res);
  }

  @Patch('tusupload/:upload_id')
  @ApiOperation({
    summary: 'TUS: append a chunk (200); the last chunk answers with the upload token (a JSON string) and Tus-Upload-Finished: 1',
  })
  async patch(@Param('upload_id') id: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    await tusRoutes.patch(this.tus, tusNamespace({ account: accountOf(req) }), id, req, res);
  }
}
