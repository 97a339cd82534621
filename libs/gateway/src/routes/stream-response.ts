import type { Response } from 'express';

export interface StreamResponseOptions<T> {
  /** The response's content type; `Cache-Control: no-cache` and `X-Accel-Buffering: no` go with it. */
  contentType: string;
  /** Further headers, set before the headers are sent. */
  headers?: Record<string, string>;
  /** Text written once the headers are sent, before the first item. */
  start?: string;
  /** The text of one item ('' writes nothing). */
  render(item: T): string;
  /**
   * The last text, written unless the client went away: `failure` is set when the source failed
   * after the headers were sent (the failure becomes the stream's last words). Without `finish`
   * such a failure is thrown to the caller once the response has ended.
   */
  finish?(failure: { error: unknown } | undefined): string;
}

/**
 * Streams an async source to an HTTP response as it comes: the NDJSON of /ask, predict chat and
 * the activity query, and the SSE of the OpenAI-compatible chat. `first` is the source's first
 * result, read by the caller before the headers so that a bad request still gets a plain error
 * (pass `undefined` to start reading here). A slow reader holds the source back (each write waits
 * for the socket to drain before the next item is read), so nothing buffers without bound; a
 * reader who goes away stops the source.
 */
export async function streamResponse<T>(
  res: Response,
  first: IteratorResult<T> | undefined,
  iterator: AsyncIterator<T>,
  options: StreamResponseOptions<T>,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', options.contentType);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  res.flushHeaders();
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  const write = async (text: string): Promise<void> => {
    if (text === '' || closed || res.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };
  let failure: { error: unknown } | undefined;
  try {
    if (options.start) await write(options.start);
    for (let n = first ?? (await iterator.next()); !n.done && !closed; n = await iterator.next()) await write(options.render(n.value));
  } catch (error) {
    failure = { error };
  }
  try {
    if (closed) await iterator.return?.();
    else if (options.finish) res.write(options.finish(failure));
  } finally {
    res.end();
  }
  if (failure && !options.finish) throw failure.error;
}
