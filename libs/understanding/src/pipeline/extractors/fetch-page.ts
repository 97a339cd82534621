import { ExtractionError } from './extraction.error';
import { assertFetchable, type LookupFn } from './fetch-guard';

export interface FetchPageOptions {
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  /** For the whole exchange, redirects and body included. Default 20 s. */
  timeoutMs?: number;
  /** Body size limit, enforced while streaming. Default 20 MiB. */
  maxBytes?: number;
  allowPrivate?: boolean;
  fetchImpl?: typeof fetch;
  lookup?: LookupFn;
}

export type FetchedPage =
  | { kind: 'html'; html: string; finalUrl: string; contentType: string }
  | { kind: 'file'; data: Buffer; finalUrl: string; contentType: string };

const MAX_REDIRECTS = 5;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * Fetches a link field's page. Redirects are followed by hand (at most 5) so every hop passes the
 * SSRF guard; the caller's headers and cookies only go to the original origin, so a redirect cannot
 * carry credentials elsewhere. HTML comes back decoded; anything else as bytes for extractFile.
 * Residual risk: the guard resolves the host before fetch resolves it again, so a DNS-rebinding
 * host could answer differently the second time; egress network policy is the backstop.
 */
export async function fetchPage(url: string, options: FetchPageOptions = {}): Promise<FetchedPage> {
  const fetchImpl = options.fetchImpl ?? fetch;
  const maxBytes = options.maxBytes ?? 20 * 1024 * 1024;
  const signal = AbortSignal.timeout(options.timeoutMs ?? 20_000);
  const origin = new URL(url).origin;
  let current = url;
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
    const data = await readLimited(res, maxBytes);
    const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (HTML_TYPES.has(mime)) return { kind: 'html', html: decode(data, contentType), finalUrl: target.href, contentType };
    return { kind: 'file', data, finalUrl: target.href, contentType };
  }
}

async function readLimited(res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge(maxBytes);
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
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
