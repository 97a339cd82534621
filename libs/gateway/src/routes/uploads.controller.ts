import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiProperty } from '@nestjs/swagger';
import type { AuthedRequest } from '../auth/auth.guard';
import { actorOf, busContextOf, skipStoreOf } from '../http/request-context';
import { decodeFilename } from '../uploads/media-types';
import { UploadService, uploadStrategiesOf } from '../uploads/upload.service';

class ResourceFileUploadedDto {
  @ApiProperty() seqid!: number;
  @ApiProperty() uuid!: string;
  @ApiProperty() field_id!: string;
}

export const header = (req: AuthedRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** The raw body of both upload routes. */
const FILE_BODY = {
  description: "The file's bytes; `Content-Type` names its media type (any, `application/octet-stream` when unknown).",
  schema: { type: 'string', format: 'binary' },
} as const;

/** Raw file uploads, streamed from the request to the blob store. */
@ApiTags('Uploads')
@ApiHeader({ name: 'x-filename', required: false, description: 'plain, URL-encoded or base64' })
@ApiHeader({ name: 'x-md5', required: false, description: 'md5 of the file; a file with the same md5 in the KB → 409' })
@ApiHeader({ name: 'x-password', required: false })
@ApiHeader({ name: 'x-language', required: false })
@ApiHeader({ name: 'x-skip-store', required: false, description: 'true: the file goes to processing and is not kept' })
@ApiHeader({ name: 'x-extract-strategy', required: false, description: 'id of an extraction strategy of the KB' })
@ApiHeader({ name: 'x-split-strategy', required: false, description: 'id of a split strategy of the KB' })
@ApiConsumes('application/octet-stream')
@Controller('api/v1/kb/:kbid')
export class UploadsController {
  constructor(private readonly uploads: UploadService) {}

  private input(req: AuthedRequest, kbid: string) {
    const length = header(req, 'content-length');
    return {
      kbid,
      body: req,
      declaredType: header(req, 'content-type'),
      filename: decodeFilename(header(req, 'x-filename')),
      md5: header(req, 'x-md5'),
      password: header(req, 'x-password'),
      language: header(req, 'x-language'),
      strategies: uploadStrategiesOf(req.headers),
      declaredSize: length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined,
      skipStore: skipStoreOf(req),
      actor: actorOf(req),
      context: busContextOf(req).context,
    };
  }

  @Post('upload')
  @HttpCode(201)
  @ApiOperation({ summary: 'Upload a file as a new resource (raw body)' })
  @ApiBody(FILE_BODY)
  @ApiResponse({ status: 201, type: ResourceFileUploadedDto })
  upload(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<ResourceFileUploadedDto> {
    return this.uploads.upload(this.input(req, kbid));
  }

  @Post(['resource/:rid/file/:field_id/upload', 'slug/:rslug/file/:field_id/upload'])
  @HttpCode(201)
  @ApiOperation({ summary: 'Upload a file into a file field of an existing resource (raw body)' })
  @ApiBody(FILE_BODY)
  @ApiResponse({ status: 201, type: ResourceFileUploadedDto })
  uploadToField(
    @Param('kbid') kbid: string,
    @Param('field_id') fieldId: string,
    @Req() req: AuthedRequest,
  ): Promise<ResourceFileUploadedDto> {
    const target = req.params['rid'] ? { rid: String(req.params['rid']) } : { slug: String(req.params['rslug']) };
    return this.uploads.upload({ ...this.input(req, kbid), target, fieldId });
  }
}
