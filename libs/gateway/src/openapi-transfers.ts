import type { Operation } from './openapi-errors';

type Schema = Record<string, unknown>;

const ERROR = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } };
const FILE = { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } };
const header = (description: string, schema: Schema = { type: 'string' }) => ({ description, schema });

/** The TUS 1.0.0 step a route serves (routes/tus.controller.ts), and what its last chunk answers. */
export interface TusDeclaration {
  step: 'create' | 'head' | 'patch';
  /** create: the optional JSON body (the new resource's members). */
  body?: Schema;
  /** patch: the body of the answer to the last chunk. */
  done?: Schema;
}

function addParameter(op: Operation, name: string, description: string, schema: Schema, required = false): void {
  const parameters = (op.parameters ??= []);
  if (!parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase()))
    parameters.push({ name, in: 'header', required, description, schema });
}

/** A TUS route's request headers, its body and its answer (headers, and the last chunk's body). */
export function declareTus(op: Operation, tus: TusDeclaration): void {
  const resumable = { 'Tus-Resumable': header('1.0.0') };
  const offset = { 'Upload-Offset': header('Bytes received so far', { type: 'integer' }) };
  addParameter(op, 'Tus-Resumable', 'TUS version (1.0.0); accepted without', { type: 'string' });
  if (tus.step === 'create') {
    addParameter(op, 'Upload-Length', 'The size of the file in bytes (or send Upload-Defer-Length: 1)', { type: 'integer', minimum: 0 });
    addParameter(op, 'Upload-Defer-Length', '1: the size is given by a later PATCH', { type: 'string', enum: ['1'] });
    addParameter(op, 'Upload-Metadata', 'Comma-separated `key base64(value)`: filename, content_type, md5, language, password', {
      type: 'string',
    });
    if (tus.body) op.requestBody = { content: { 'application/json': { schema: tus.body } } };
    op.responses['201'] = {
      description: 'Created: `Location` is the URL of the upload (absolute)',
      headers: { ...resumable, ...offset, Location: header('The URL to HEAD and PATCH', { type: 'string', format: 'uri' }) },
    };
  } else if (tus.step === 'head') {
    op.responses['200'] = {
      description: 'Where the upload stands (no body)',
      headers: {
        ...resumable,
        ...offset,
        'Upload-Length': header('The size of the file, when known', { type: 'integer' }),
        'Upload-Defer-Length': header('1 while the size is not known yet'),
      },
    };
  } else {
    addParameter(op, 'Upload-Offset', 'Where this chunk starts: the current offset', { type: 'integer', minimum: 0 }, true);
    addParameter(op, 'Upload-Length', 'The size of the file, on a deferred-length upload', { type: 'integer', minimum: 0 });
    op.requestBody = {
      content: {
        'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } },
        'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
      },
    };
    op.responses['200'] = {
      description: 'Appended: no body, but the last chunk (Tus-Upload-Finished: 1) answers with the upload result',
      headers: { ...resumable, ...offset, 'Tus-Upload-Finished': header('1 when this chunk completed the upload') },
      ...(tus.done ? { content: { 'application/json': { schema: tus.done } } } : {}),
    };
  }
}

/** A file streamed from the store: the Range header, 200 whole, 206 partial, 416 outside the file. */
export function declareDownload(op: Operation, mediaType?: string): void {
  addParameter(op, 'Range', 'One byte range, `bytes=<start>-[<end>]` or `bytes=-<suffix>`', { type: 'string' });
  const ok = op.responses['200'];
  const declared = ok?.content && Object.keys(ok.content).length > 0 ? ok.content : undefined;
  const content = declared ?? (mediaType ? { [mediaType]: FILE['application/octet-stream'] } : FILE);
  op.responses['200'] = { description: ok?.description || 'The whole file (`Content-Disposition` names it)', content };
  op.responses['206'] = {
    description: 'The asked range of the file',
    headers: { 'Content-Range': header('`bytes <start>-<end>/<size>`') },
    content,
  };
  op.responses['416'] = { description: 'The range is outside the file', content: ERROR };
}
