import { httpFailure, OutboundError, outboundHttp, type OutboundHttp } from '@kb/platform/net';
import { GenerationError, type GenerationErrorKind } from './generator';

/** One server-sent event: `event` defaults to `message`, as in the EventSource standard. */
export interface SseMessage {
  event: string;
  data: string;
}

/** The pseudo-event of a provider that ignored `stream: true` and sent one JSON document. */
export const WHOLE_JSON_BODY = '(json body)';

export interface StreamingPost {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Longest wait for the response, and for each chunk after it. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the provider in error messages. */
  provider: string;
  /** The guarded client (default: the process's). */
  http?: OutboundHttp;
}

/** A generated answer is text: far below this. The limit stops a provider (or what poses as one) streaming without end. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * POSTs a JSON body and yields the server-sent events of the answer. Never hangs: waiting longer
 * than `timeoutMs` for headers or for any chunk aborts the request with a `timeout` error; the
 * clock runs only while waiting on the network, not while the consumer handles an event. Leaving
 * the loop early, or aborting `signal`, closes the connection.
 */
export async function* postForEvents(o: StreamingPost): AsyncGenerator<SseMessage> {
  if (o.signal?.aborted) throw abortedError(o.provider);
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  let finished = false;
  const waitFor = async <T>(during: string, work: Promise<T>): Promise<T> => {
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, o.timeoutMs);
    try {
      return await work;
    } catch (err) {
      if (timedOut) throw new GenerationError('timeout', `${o.provider} sent nothing for ${o.timeoutMs} ms while ${during}`);
      if (o.signal?.aborted) throw abortedError(o.provider);
      if (err instanceof GenerationError) throw err;
      // A refused address is a configuration that cannot work: not worth another attempt.
      if (err instanceof OutboundError && err.code === 'FORBIDDEN_ADDRESS')
        throw new GenerationError('bad_request', `${o.provider} is not reachable: ${err.message}`);
      throw new GenerationError('provider', `${o.provider} failed while ${during}: ${describe(err)}`);
    } finally {
      clearTimeout(timer);
    }
  };

  try {
    const res = await waitFor(
      'waiting for a response',
      (o.http ?? outboundHttp()).fetch(o.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream, application/json', ...o.headers },
        body: JSON.stringify(o.body),
        signal: controller.signal,
        maxBytes: MAX_ANSWER_BYTES,
      }),
    );
    if (!res.ok) {
      // The body is not read: the status and our own words say enough, and an internal service's page stays there.
      await res.body?.cancel().catch(() => undefined);
      throw httpError(o.provider, res.status, res.headers);
    }
    if (!res.body) throw new GenerationError('provider', `${o.provider} sent an empty response`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.includes('text/event-stream') && contentType.includes('json')) {
      let text = '';
      for (
        let chunk = await waitFor('reading the response', reader.read());
        !chunk.done;
        chunk = await waitFor('reading the response', reader.read())
      ) {
        text += decoder.decode(chunk.value, { stream: true });
      }
      finished = true;
      yield { event: WHOLE_JSON_BODY, data: text + decoder.decode() };
      return;
    }
    const parser = new SseParser();
    for (let chunk = await waitFor('streaming', reader.read()); !chunk.done; chunk = await waitFor('streaming', reader.read())) {
      for (const message of parser.push(decoder.decode(chunk.value, { stream: true }))) yield message;
    }
    finished = true;
    for (const message of [...parser.push(decoder.decode()), ...parser.end()]) yield message;
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    // The consumer stopped early or something failed: free the connection instead of draining it.
    if (!finished) controller.abort();
  }
}

/** An incremental parser of the `text/event-stream` format (WHATWG HTML, server-sent events). */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';

  /** Feeds decoded text; returns the events it completed. */
  push(text: string): SseMessage[] {
    this.buffer += text;
    const out: SseMessage[] = [];
    let pos = 0;
    for (;;) {
      let eol = -1;
      for (let j = pos; j < this.buffer.length; j++) {
        const c = this.buffer.charCodeAt(j);
        if (c === 10 || c === 13) {
          eol = j;
          break;
        }
      }
      if (eol < 0) break;
      let next = eol + 1;
      if (this.buffer.charCodeAt(eol) === 13) {
        // A CR at the end of the input may be the first half of a CRLF: wait for the next chunk.
        if (next === this.buffer.length) break;
        if (this.buffer.charCodeAt(next) === 10) next++;
      }
      this.line(this.buffer.slice(pos, eol), out);
      pos = next;
    }
    this.buffer = this.buffer.slice(pos);
    return out;
  }

  /** Ends the input: an event not followed by a blank line is still delivered. */
  end(): SseMessage[] {
    const out: SseMessage[] = [];
    const rest = this.buffer.replace(/\r$/, '');
    this.buffer = '';
    if (rest) this.line(rest, out);
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      const data = this.data.join('\n');
      if (this.data.length && data !== '') out.push({ event: this.event || 'message', data });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/** Maps a provider's HTTP status to an error kind; 529 is Anthropic's "overloaded". */
export function kindOfStatus(status: number): GenerationErrorKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429 || status === 529) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 400 && status < 500) return 'bad_request';
  return 'provider';
}

export function httpError(provider: string, status: number, headers: Headers): GenerationError {
  return new GenerationError(kindOfStatus(status), httpFailure(provider, status), status, retryAfterSeconds(headers));
}

/** Seconds to wait, from `retry-after-ms` (Azure, OpenAI) or `retry-after` (seconds or an HTTP date). */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const header = headers.get('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** `{url}{path}`, keeping the query string (Azure's `?api-version=`); a url already ending in `path` is kept. */
export function endpointUrl(base: string, path: string): string {
  const url = new URL(base);
  const pathname = url.pathname.replace(/\/+$/, '');
  url.pathname = pathname.endsWith(path) ? pathname : `${pathname}${path}`;
  return url.toString();
}

export function parseJson(data: string, provider: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new GenerationError('provider', `${provider} sent a malformed event (${data.length} characters, not JSON)`);
  }
}

function abortedError(provider: string): GenerationError {
  return new GenerationError('aborted', `${provider} generation was aborted`);
}

/** Our own words for a failure: the client's message, or the socket error code fetch() hides in `cause`. */
function describe(err: unknown): string {
  if (err instanceof OutboundError) return err.message;
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code || cause?.message) return [cause.code, cause.message].filter(Boolean).join(' ');
  return err instanceof Error ? err.message : String(err);
}
