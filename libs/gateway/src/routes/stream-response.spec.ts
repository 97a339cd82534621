import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { streamResponse, type StreamResponseOptions } from './stream-response';

/** A source of `count` lines of `size` characters that records how far it was read and whether it was stopped. */
function source(count: number, size = 10, failAt?: number) {
  const state = { produced: 0, returned: false };
  const iterator: AsyncIterator<string> = {
    next: async () => {
      if (failAt !== undefined && state.produced === failAt) throw new Error('model went away');
      if (state.produced >= count) return { done: true, value: undefined };
      state.produced++;
      return { done: false, value: String(state.produced % 10).repeat(size) };
    },
    return: async () => {
      state.returned = true;
      return { done: true, value: undefined };
    },
  };
  return { state, iterator };
}

async function serve(handler: (res: express.Response) => Promise<void>) {
  const errors: unknown[] = [];
  const app = express();
  app.get('/', (_req, res) => {
    handler(res).catch((err: unknown) => errors.push(err));
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const get = () =>
    new Promise<IncomingMessage>((resolve, reject) =>
      httpRequest({ port, host: '127.0.0.1', path: '/' }, resolve).on('error', reject).end(),
    );
  return { errors, get, close: () => new Promise((resolve) => server.close(resolve)) };
}

const read = async (res: IncomingMessage): Promise<string> => {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
};

const lines: StreamResponseOptions<string> = { contentType: 'application/x-ndjson', render: (item) => `${item}\n` };

describe('streamResponse', () => {
  it('writes the start, every item and the finish, with the streaming headers', async () => {
    const { iterator } = source(3, 2);
    const first = await iterator.next();
    const app = await serve((res) =>
      streamResponse(res, first, iterator, { ...lines, headers: { 'has-more': 'false' }, start: 'S\n', finish: () => 'E\n' }),
    );
    try {
      const res = await app.get();
      expect(res.headers['content-type']).toBe('application/x-ndjson');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['has-more']).toBe('false');
      expect(await read(res)).toBe('S\n11\n22\n33\nE\n');
    } finally {
      await app.close();
    }
  });

  it('ends a failing source with the finish text, or throws after ending when there is none', async () => {
    const failing = source(5, 1, 2);
    const quiet = source(5, 1, 2);
    let calls = 0;
    const app = await serve((res) =>
      calls++ === 0
        ? streamResponse(res, undefined, failing.iterator, {
            ...lines,
            finish: (failure) => (failure ? `error: ${(failure.error as Error).message}\n` : 'ok\n'),
          })
        : streamResponse(res, undefined, quiet.iterator, lines),
    );
    try {
      expect(await read(await app.get())).toBe('1\n2\nerror: model went away\n');
      expect(await read(await app.get())).toBe('1\n2\n');
      expect(app.errors).toEqual([expect.objectContaining({ message: 'model went away' })]);
    } finally {
      await app.close();
    }
  });

  it('holds the source back while the reader does not read, and stops it when the reader goes away', async () => {
    // 2,000 items of 64 KiB: far more than the socket buffers hold.
    const { state, iterator } = source(2_000, 64 * 1024);
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const app = await serve((res) => streamResponse(res, undefined, iterator, lines).finally(finished));
    try {
      const res = await app.get();
      res.pause();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Only what fits in the socket's and the response's buffers was read from the source.
      expect(state.produced).toBeLessThan(200);
      res.destroy();
      await done;
      expect(state.returned).toBe(true);
      expect(state.produced).toBeLessThan(200);
    } finally {
      await app.close();
    }
  });
});
