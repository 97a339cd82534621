import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { detectMediaType } from './detect-file-type';
import { ExtractionError } from './extraction.error';
import { assertFetchable, type LookupFn } from './fetch-guard';

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
  allowPrivate?: boolean;
  fetchImpl?: typeof fetch;
  lookup?: LookupFn;
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

/**
 * Fetches a link field's page. Redirects are followed by hand (at most 5) so every hop passes the
 * SSRF guard; the caller's headers and cookies only go to the original origin, so a redirect cannot
 * carry credentials elsewhere. HTML comes back decoded; anything else as bytes for extractFile.
 * Residual risk: the guard resolves the host before fetch resolves it again, so a DNS-rebinding
 * host could answer differently the second time; egress network policy is the backstop.
 */
export function fetchPage(url: string, options: FetchPageOptions & { media: NonNullable<FetchPageOptions['media']> }): Promise<FetchedPage>;
export function fetchPage(url: string, options?: FetchPageOptions): Promise<Exclude<FetchedPage, FetchedMedia>>;
export async function fetchPage(url: string, options: FetchPageOptions = {}): Promise<FetchedPage> {
  const fetchImpl = options.fetchImpl ?? fetch;
  const maxBytes = options.maxBytes ?? 20 * 1024 * 1024;
  // One controller for the exchange: a page must come within the timeout, a recording keeps
  // streaming as long as bytes keep coming (see spool).
  const controller = new AbortController();
  const deadline = setTimeout(() => controller.abort(new Error(`no complete answer within ${options.timeoutMs ?? 20_000} ms`)), options.timeoutMs ?? 20_000);
  const signal = controller.signal;
  const origin = new URL(url).origin;
  let current = url;
  let handedOver = false;
  try {
    for (let hop = 0; ; hop++) {
      const { url: target } = await assertFetchable(current, { allowPrivate: options.allowPrivate ?? false, lookup: options.lookup });
      const headers: Record<string, string> = { 'user-agent': 'KnowledgeBoxBot/1.0', accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
      if (target.origin === origin) {
        Object.assign(headers, options.headers ?? {});
        const cookie = Object.entries(options.cookies ?? {}).map(([k, v]) => `${k}=${v}`).join('; ');
        if (cookie) headers['cookie'] = cookie;
      }
      let res: Response;
      try {
        res = await fetchImpl(target.href, { redirect: 'manual', headers, signal });
      } catch (err) {
        throw new ExtractionError(`Fetching ${target.href} failed: ${(err as Error).message}`, 'FETCH_FAILED');
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new ExtractionError(`More than ${MAX_REDIRECTS} redirects from ${url}`, 'FETCH_FAILED');
        current = new URL(location, target).href;
        continue;
      }
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
        return mediaPage(reader, head, { type: mediaType, finalUrl: target.href, contentType, controller, idleMs: options.media?.idleMs ?? 60_000, maxMs: options.media?.maxMs ?? 6 * 3600_000 });
      }
      const data = await readLimited(res, reader, head, maxBytes);
      const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
      if (HTML_TYPES.has(mime)) return { kind: 'html', html: decode(data, contentType), finalUrl: target.href, contentType };
      return { kind: 'file', data, finalUrl: target.href, contentType };
    }
  } finally {
    if (!handedOver) clearTimeout(deadline);
  }
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
    throw new ExtractionError(`Reading the response failed: ${(err as Error).message}`, 'FETCH_FAILED');
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
      const reason = o.controller.signal.aborted ? String((o.controller.signal.reason as Error | undefined)?.message ?? 'aborted') : (err as Error).message;
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

async function readLimited(res: Response, reader: Reader | undefined, head: { chunks: Uint8Array[]; done: boolean }, maxBytes: number): Promise<Buffer> {
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
    if (err instanceof ExtractionError) throw err;
    throw new ExtractionError(`Reading the response failed: ${(err as Error).message}`, 'FETCH_FAILED');
  }
  return Buffer.concat(chunks);
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
