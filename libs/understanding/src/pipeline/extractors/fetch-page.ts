import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { OutboundError, outboundHttp, type OutboundHttp } from '@kb/platform/net';
import { detectMediaType } from './detect-file-type';
import { ExtractionError } from './extraction.error';

export interface FetchPageOptions {
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  /** For the whole exchange, redirects and body included. Default 20 s. */
  timeoutMs?: number;
  /** Body size limit, enforced while streaming. Default 20 MiB (audio and video: see `media`). */
  maxBytes?: number;
  /**
   * When set, audio and video are not read into memory: they come back as `kind: 'media'`, to be
   * streamed to disk by `spool`, with no overall deadline but an idle one (default 60 s without a
   * byte) and a ceiling (default 6 hours). Unset: every body is read (up to `maxBytes`).
   */
  media?: { idleMs?: number; maxMs?: number };
  /** The guarded client (default: the process's, with the operator's policy). */
  http?: OutboundHttp;
}

export type FetchedPage =
  | { kind: 'html'; html: string; finalUrl: string; contentType: string }
  | { kind: 'file'; data: Buffer; finalUrl: string; contentType: string }
  | FetchedMedia;

/** A recording behind a link, its body not read yet. */
export interface FetchedMedia {
  kind: 'media';
  /** The media type, from the first bytes, the declared type or the URL's file name. */
  type: string;
  finalUrl: string;
  contentType: string;
  /** Streams the body to `path`; resolves to its MD5 (hex). TOO_LARGE above `maxBytes`. Once only. */
  spool(path: string, maxBytes: number): Promise<string>;
  /** Drops the body unread (when it is not wanted after all). */
  discard(): Promise<void>;
}

/** Bytes enough to recognise every audio and video signature. */
const HEAD_BYTES = 4096;

const MAX_REDIRECTS = 5;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/** A recording has no size limit of its own here: `spool` enforces the one its caller gives. */
const MEDIA_CEILING_BYTES = Number.MAX_SAFE_INTEGER;

/**
 * Fetches a link field's page through the guarded outbound client: every redirect hop (at most
 * 5) is checked on the socket it opens, and the caller's headers and cookies stay with the first
 * origin. HTML comes back decoded; anything else as bytes for extractFile.
 */
export function fetchPage(url: string, options: FetchPageOptions & { media: NonNullable<FetchPageOptions['media']> }): Promise<FetchedPage>;
export function fetchPage(url: string, options?: FetchPageOptions): Promise<Exclude<FetchedPage, FetchedMedia>>;
export async function fetchPage(url: string, options: FetchPageOptions = {}): Promise<FetchedPage> {
  const http = options.http ?? outboundHttp();
  const maxBytes = options.maxBytes ?? 20 * 1024 * 1024;
  // One controller for the exchange: a page must come within the timeout, a recording keeps
  // streaming as long as bytes keep coming (see spool).
  const controller = new AbortController();
  const deadline = setTimeout(
    () => controller.abort(new Error(`no complete answer within ${options.timeoutMs ?? 20_000} ms`)),
    options.timeoutMs ?? 20_000,
  );
  const signal = controller.signal;
  let handedOver = false;
  try {
    const headers: Record<string, string> = {
      'user-agent': 'KnowledgeBoxBot/1.0',
      accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
      ...(options.headers ?? {}),
    };
    const cookie = Object.entries(options.cookies ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
    if (cookie) headers['cookie'] = cookie;
    let res: Response;
    try {
      res = await http.fetch(url, {
        headers,
        signal,
        redirect: 'follow',
        maxRedirects: MAX_REDIRECTS,
        maxBytes: options.media ? MEDIA_CEILING_BYTES : maxBytes,
      });
    } catch (err) {
      throw asExtractionError(err, url, signal);
    }
    const target = new URL(res.url || url);
    if (!res.ok) {
      await res.body?.cancel();
      throw new ExtractionError(`Fetching ${target.href} answered ${res.status}`, 'FETCH_FAILED');
    }
    const contentType = res.headers.get('content-type') ?? 'application/octet-stream';
    // Without media, a body declared too large is refused before a byte is read.
    if (!options.media && declaredTooLarge(res, maxBytes)) {
      await res.body?.cancel();
      throw tooLarge(maxBytes);
    }
    const reader = res.body?.getReader();
    const head = reader ? await readHead(reader) : { chunks: [], done: true };
    const filename = decodeURIComponent(target.pathname.split('/').pop() ?? '');
    const mediaType = options.media ? detectMediaType(Buffer.concat(head.chunks), contentType.split(';')[0]?.trim(), filename) : undefined;
    if (mediaType && reader) {
      clearTimeout(deadline);
      handedOver = true;
      return mediaPage(reader, head, {
        type: mediaType,
        finalUrl: target.href,
        contentType,
        controller,
        idleMs: options.media?.idleMs ?? 60_000,
        maxMs: options.media?.maxMs ?? 6 * 3600_000,
      });
    }
    const data = await readLimited(res, reader, head, maxBytes);
    const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (HTML_TYPES.has(mime)) return { kind: 'html', html: decode(data, contentType), finalUrl: target.href, contentType };
    return { kind: 'file', data, finalUrl: target.href, contentType };
  } finally {
    if (!handedOver) clearTimeout(deadline);
  }
}

/** The client's refusals keep their meaning (FORBIDDEN_ADDRESS, TOO_LARGE); any other failure is FETCH_FAILED. */
function asExtractionError(err: unknown, url: string, signal: AbortSignal): ExtractionError {
  if (err instanceof ExtractionError) return err;
  if (err instanceof OutboundError && (err.code === 'FORBIDDEN_ADDRESS' || err.code === 'TOO_LARGE'))
    return new ExtractionError(err.message, err.code);
  const reason = signal.aborted ? String((signal.reason as Error | undefined)?.message ?? 'aborted') : (err as Error).message;
  return new ExtractionError(`Fetching ${url} failed: ${reason}`, 'FETCH_FAILED');
}

type Reader = ReadableStreamDefaultReader<Uint8Array>;

/** The first bytes of the body (at least HEAD_BYTES, or all of it). */
async function readHead(reader: Reader): Promise<{ chunks: Uint8Array[]; done: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < HEAD_BYTES) {
      const { done, value } = await reader.read();
      if (done) return { chunks, done: true };
      chunks.push(value);
      total += value.byteLength;
    }
  } catch (err) {
    throw readFailure(err);
  }
  return { chunks, done: false };
}

function mediaPage(
  reader: Reader,
  head: { chunks: Uint8Array[]; done: boolean },
  o: { type: string; finalUrl: string; contentType: string; controller: AbortController; idleMs: number; maxMs: number },
): FetchedMedia {
  let used = false;
  const discard = async () => {
    if (used) return;
    used = true;
    await reader.cancel().catch(() => undefined);
  };
  const spool = async (path: string, maxBytes: number): Promise<string> => {
    if (used) throw new Error('the response body was already used');
    used = true;
    const md5 = createHash('md5');
    const out = createWriteStream(path);
    let idle: NodeJS.Timeout | undefined;
    const stop = (why: string) => o.controller.abort(new Error(why));
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stop(`no data for ${o.idleMs} ms`), o.idleMs);
    };
    const ceiling = setTimeout(() => stop(`the download took longer than ${o.maxMs} ms`), o.maxMs);
    let total = 0;
    const write = async (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes);
      md5.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((resolve, reject) => out.once('drain', resolve).once('error', reject));
    };
    try {
      touch();
      for (const chunk of head.chunks) await write(chunk);
      if (!head.done) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          touch();
          await write(value);
        }
      }
      out.end();
      await finished(out);
      return md5.digest('hex');
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      out.destroy();
      if (err instanceof ExtractionError) throw err;
      const reason = o.controller.signal.aborted
        ? String((o.controller.signal.reason as Error | undefined)?.message ?? 'aborted')
        : (err as Error).message;
      throw new ExtractionError(`Downloading ${o.finalUrl} failed: ${reason}`, 'FETCH_FAILED');
    } finally {
      clearTimeout(idle);
      clearTimeout(ceiling);
    }
  };
  return { kind: 'media', type: o.type, finalUrl: o.finalUrl, contentType: o.contentType, spool, discard };
}

function declaredTooLarge(res: Response, maxBytes: number): boolean {
  return Number(res.headers.get('content-length') ?? NaN) > maxBytes;
}

async function readLimited(
  res: Response,
  reader: Reader | undefined,
  head: { chunks: Uint8Array[]; done: boolean },
  maxBytes: number,
): Promise<Buffer> {
  if (declaredTooLarge(res, maxBytes)) {
    await reader?.cancel();
    throw tooLarge(maxBytes);
  }
  const chunks = [...head.chunks];
  let total = chunks.reduce((n, c) => n + c.byteLength, 0);
  if (total > maxBytes) {
    await reader?.cancel();
    throw tooLarge(maxBytes);
  }
  if (!reader || head.done) return Buffer.concat(chunks);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } catch (err) {
    throw readFailure(err);
  }
  return Buffer.concat(chunks);
}

function readFailure(err: unknown): ExtractionError {
  if (err instanceof ExtractionError) return err;
  if (err instanceof OutboundError && err.code === 'TOO_LARGE') return new ExtractionError(err.message, 'TOO_LARGE');
  return new ExtractionError(`Reading the response failed: ${(err as Error).message}`, 'FETCH_FAILED');
}

function tooLarge(maxBytes: number): ExtractionError {
  return new ExtractionError(`The response is larger than ${maxBytes} bytes`, 'TOO_LARGE');
}

/** Charset from the header, else from a <meta charset> in the first 2 KiB, else UTF-8. */
function decode(data: Buffer, contentType: string): string {
  const fromHeader = /charset="?([\w-]+)/i.exec(contentType)?.[1];
  const fromMeta = /<meta[^>]+charset=["']?([\w-]+)/i.exec(data.subarray(0, 2048).toString('latin1'))?.[1];
  try {
    return new TextDecoder(fromHeader ?? fromMeta ?? 'utf-8').decode(data);
  } catch {
    return new TextDecoder('utf-8').decode(data);
  }
}
