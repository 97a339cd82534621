import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCodes } from '@kb/contracts';
import { readMultipartFile } from './multipart';

/** A server that reads the first file part and answers what it got. */
function startServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    readMultipartFile(req).then(
      async (part) => {
        let size = 0;
        const head: Buffer[] = [];
        for await (const chunk of part.stream) {
          size += (chunk as Buffer).length;
          if (head.length < 1) head.push(chunk as Buffer);
        }
        await part.finished;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            size,
            filename: part.filename,
            mimeType: part.mimeType,
            start: Buffer.concat(head).subarray(0, 5).toString(),
          }),
        );
      },
      (err: { code?: string; message: string }) =>
        res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ code: err.code, message: err.message })),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })),
  );
}

describe('readMultipartFile', () => {
  let url: string;
  let server: Server;
  beforeAll(async () => ({ url, server } = await startServer()));
  afterAll(() => new Promise((r) => server.close(r)));

  it('streams the first file part whole, with its name and type, past other fields', async () => {
    const form = new FormData();
    form.append('note', 'a field before the file');
    form.append('file', new Blob([Buffer.alloc(6 * 1024 * 1024, 120)], { type: 'text/plain' }), 'big notes.txt');
    form.append('second', new Blob(['ignored']), 'other.txt');
    const res = await fetch(url, { method: 'POST', body: form });
    expect(await res.json()).toEqual({ size: 6 * 1024 * 1024, filename: 'big notes.txt', mimeType: 'text/plain', start: 'xxxxx' });
  });

  it('refuses a body without a file part, and one that is not multipart at all', async () => {
    const form = new FormData();
    form.append('only', 'fields');
    const none = await fetch(url, { method: 'POST', body: form });
    expect(none.status).toBe(422);
    expect(await none.json()).toMatchObject({ code: ErrorCodes.VALIDATION_FAILED, message: expect.any(String) });
    const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'no boundary' });
    expect(bad.status).toBe(422);
  });
});
