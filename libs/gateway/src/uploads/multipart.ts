import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { DomainError } from '@kb/contracts';

/** The first file of a multipart/form-data body, as a stream; the rest of the body is drained. */
export interface MultipartFile {
  stream: Readable;
  filename?: string;
  mimeType?: string;
  /** True once the body turned out malformed or cut short while the file was read. */
  broken(): boolean;
  /** Settles when the whole body has been read. */
  finished: Promise<void>;
}

const malformed = (msg: string) => DomainError.validation([{ loc: ['body'], msg, type: 'value_error' }]);

export const isMultipart = (contentType: string | undefined): boolean => /^multipart\/form-data\b/i.test(contentType ?? '');

/**
 * Streams the first file part of a multipart body (the spec's "multipart upload"): nothing is
 * buffered, so a file of any size passes through with the memory of one chunk. A body without a
 * file part, or one the parser cannot read, is a 422.
 */
export function readMultipartFile(req: IncomingMessage): Promise<MultipartFile> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 50, parts: 60, fieldSize: 64 * 1024 } });
    } catch (err) {
      reject(malformed(`Malformed multipart body: ${(err as Error).message}`));
      return;
    }
    let found = false;
    let broken = false;
    const finished = new Promise<void>((done, fail) => {
      parser.on('close', done);
      parser.on('error', fail);
    });
    finished.catch(() => undefined);
    parser.on('file', (_name, stream, info) => {
      if (found) {
        stream.resume();
        return;
      }
      found = true;
      stream.on('error', () => (broken = true));
      resolve({
        stream,
        ...(info.filename ? { filename: info.filename } : {}),
        ...(info.mimeType ? { mimeType: info.mimeType } : {}),
        broken: () => broken,
        finished,
      });
    });
    parser.on('error', (err: Error) => {
      broken = true;
      if (!found) reject(malformed(`Malformed multipart body: ${err.message}`));
    });
    parser.on('close', () => {
      if (!found) reject(DomainError.validation([{ loc: ['body', 'file'], msg: 'The multipart body has no file part', type: 'missing' }]));
    });
    req.pipe(parser);
  });
}
