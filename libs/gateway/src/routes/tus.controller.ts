import { Controller, Head, HttpCode, Options, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateResourceDto, DomainError, ErrorCodes, validatePayload } from '@kb/contracts';
import type { AuthedRequest } from '../auth/auth.guard';
import { actorOf, busContextOf, skipStoreOf } from '../http/request-context';
import { TUS_EXTENSIONS, TUS_VERSION, TusService, parseUploadMetadata, tusNamespace } from '../uploads/tus.service';
import { uploadStrategiesOf } from '../uploads/upload.service';

const BASES = ['', 'resource/:rid/file/:field_id/', 'slug/:rslug/file/:field_id/'];
const paths = (suffix: string) => BASES.map((b) => `${b}${suffix}`);
const MAX_SIZE = 5 * 1024 ** 3;

function intHeader(req: AuthedRequest, name: string): number | undefined {
  const raw = req.headers[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw))
    throw DomainError.validation([{ loc: ['header', name], msg: `${name} must be a non-negative integer`, type: 'int_parsing' }]);
  return Number(raw);
}

/** The TUS exchanges, shared by the KB's upload routes and the understanding API's. */
export const tusRoutes = {
  info(res: Response): void {
    res
      .status(204)
      .set({ 'Tus-Resumable': TUS_VERSION, 'Tus-Version': TUS_VERSION, 'Tus-Extension': TUS_EXTENSIONS, 'Tus-Max-Size': String(MAX_SIZE) })
      .end();
  },

  async create(
    tus: TusService,
    owner: { kbid: string } | { account: string },
    req: AuthedRequest,
    res: Response,
    resource?: CreateResourceDto,
  ): Promise<void> {
    const length = intHeader(req, 'upload-length');
    if (length !== undefined && length > MAX_SIZE)
      throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `Upload-Length exceeds Tus-Max-Size ${MAX_SIZE}`);
    const target = req.params['rid']
      ? { rid: String(req.params['rid']) }
      : req.params['rslug']
        ? { slug: String(req.params['rslug']) }
        : undefined;
    const state = await tus.create({
      owner,
      target,
      fieldId: req.params['field_id'] ? String(req.params['field_id']) : undefined,
      length,
      deferLength: req.headers['upload-defer-length'] === '1',
      metadata: parseUploadMetadata(req.headers['upload-metadata'] as string | undefined),
      resource,
      skipStore: skipStoreOf(req),
      ...('kbid' in owner ? { strategies: uploadStrategiesOf(req.headers) } : {}),
      context: busContextOf(req).context,
    });
    const proto = String(req.headers['x-forwarded-proto'] ?? req.protocol).split(',')[0];
    const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost');
    res
      .status(201)
      .set({ 'Tus-Resumable': TUS_VERSION, 'Upload-Offset': '0', Location: `${proto}://${host}${req.path.replace(/\/$/, '')}/${state.id}` })
      .end();
  },

  async head(tus: TusService, ns: string, id: string, res: Response): Promise<void> {
    const state = await tus.status(ns, id);
    res
      .status(200)
      .set({
        'Tus-Resumable': TUS_VERSION,
        'Upload-Offset': String(state.offset),
        'Cache-Control': 'no-store',
        ...(state.length !== undefined ? { 'Upload-Length': String(state.length) } : { 'Upload-Defer-Length': '1' }),
      })
      .end();
  },

  async patch(tus: TusService, ns: string, id: string, req: AuthedRequest, res: Response): Promise<void> {
    const offset = intHeader(req, 'upload-offset');
    if (offset === undefined) throw DomainError.validation([{ loc: ['header', 'upload-offset'], msg: 'Field required', type: 'missing' }]);
    const { state, done } = await tus.append(
      ns,
      id,
      offset,
      intHeader(req, 'upload-length'),
      req,
      actorOf(req),
      busContextOf(req).context,
      skipStoreOf(req),
    );
    res.status(200).set({
      'Tus-Resumable': TUS_VERSION,
      'Upload-Offset': String(state.offset),
      ...(done !== undefined ? { 'Tus-Upload-Finished': '1' } : {}),
    });
    if (done !== undefined) res.json(done);
    else res.end();
  },
};

/**
 * TUS 1.0.0 as the reference clients use it: PATCH answered with 200 (not 204), accepted without
 * `Tus-Resumable` and with any content type, an optional JSON body on creation with the new
 * resource's members, and `Location` as an absolute URL.
 */
@ApiTags('Uploads')
@Controller('api/v1/kb/:kbid')
export class TusController {
  constructor(private readonly tus: TusService) {}

  @Options([...paths('tusupload'), ...paths('tusupload/:upload_id')])
  @ApiExcludeEndpoint()
  info(@Res() res: Response): void {
    tusRoutes.info(res);
  }

  @Post(paths('tusupload'))
  @HttpCode(201)
  @ApiOperation({
    summary:
      'TUS: create a resumable upload (Upload-Length or Upload-Defer-Length: 1; Upload-Metadata filename,content_type,md5,language,password)',
  })
  async create(@Param('kbid') kbid: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    const body = req.body as unknown;
    const hasBody = body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body as object).length === 0);
    const resource = hasBody ? validatePayload(CreateResourceDto, body, { loc: ['body'] }) : undefined;
    await tusRoutes.create(this.tus, { kbid }, req, res, resource);
  }

  @Head(paths('tusupload/:upload_id'))
  @ApiOperation({ summary: 'TUS: current offset of an upload' })
  async head(@Param('kbid') kbid: string, @Param('upload_id') id: string, @Res() res: Response): Promise<void> {
    await tusRoutes.head(this.tus, tusNamespace({ kbid }), id, res);
  }

  @Patch(paths('tusupload/:upload_id'))
  @ApiOperation({ summary: 'TUS: append a chunk at Upload-Offset (200; Tus-Upload-Finished: 1 on the last chunk)' })
  async patch(@Param('kbid') kbid: string, @Param('upload_id') id: string, @Req() req: AuthedRequest, @Res() res: Response): Promise<void> {
    await tusRoutes.patch(this.tus, tusNamespace({ kbid }), id, req, res);
  }
}
