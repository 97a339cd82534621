import { Agent, fetch as undiciFetch } from 'undici';
import { AddressPolicy, type OutboundPolicy } from './address-policy';
import { guardedConnector, systemResolver, type Resolver } from './guarded-connector';
import { OutboundError, outboundErrorIn } from './outbound-error';

export interface OutboundHttpOptions {
  policy?: OutboundPolicy;
  /** Name resolution; tests answer with fixed (or changing) addresses. */
  resolve?: Resolver;
  connectTimeoutMs?: number;
  /** Longest wait for the response headers, and between two chunks of the body, on every request. */
  idleTimeoutMs?: number;
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | FormData | null;
  signal?: AbortSignal;
  /** Deadline for the whole exchange up to the last byte read; without it only the idle timeouts apply. */
  timeoutMs?: number;
  /** Body size limit, enforced on the declared length and while streaming. Default 20 MiB. */
  maxBytes?: number;
  /** `manual` (default) hands a 3xx back as it is; `follow` follows up to `maxRedirects` hops, each checked. */
  redirect?: 'manual' | 'follow';
  maxRedirects?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 20 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Headers that carry no credential: the only ones kept once a redirect leaves the first origin. */
const NEUTRAL_HEADERS = new Set(['accept', 'accept-language', 'user-agent']);

/**
 * The one HTTP client for requests made on a tenant's behalf (links, file URLs, model providers,
 * webhooks). The address is checked on the socket itself (see guarded-connector), redirects are
 * followed by hand through the same check and drop credentials when they change origin, only
 * http and https are spoken, and every request has timeouts and a body size limit.
 */
export class OutboundHttp {
  private readonly policy: AddressPolicy;
  private readonly agent: Agent;

  constructor(options: OutboundHttpOptions = {}) {
    this.policy = new AddressPolicy(options.policy);
    const idle = options.idleTimeoutMs ?? 300_000;
    this.agent = new Agent({
      connect: guardedConnector(this.policy, options.resolve ?? systemResolver, options.connectTimeoutMs ?? 10_000),
      headersTimeout: idle,
      bodyTimeout: idle,
    });
  }

  /**
   * Sends the request; resolves to a standard Response whose `url` is the last hop's. Rejects with
   * an OutboundError (refused address, failure, timeout, body too large); an abort of the caller's
   * own `signal` rejects with the abort reason, untouched.
   */
  async fetch(url: string, init: OutboundRequest = {}): Promise<Response> {
    const deadline = init.timeoutMs !== undefined ? AbortSignal.timeout(init.timeoutMs) : undefined;
    const signals = [init.signal, deadline].filter((s): s is AbortSignal => !!s);
    const signal = signals.length ? AbortSignal.any(signals) : undefined;
    const maxRedirects = init.redirect === 'follow' ? (init.maxRedirects ?? 5) : 0;
    let target = this.checkUrl(url);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body ?? undefined;
    let headers: Record<string, string> = { ...(init.headers ?? {}) };
    for (let hop = 0; ; hop++) {
      let res: Awaited<ReturnType<typeof undiciFetch>>;
      try {
        res = await undiciFetch(target.href, { method, headers, body, redirect: 'manual', signal, dispatcher: this.agent });
      } catch (err) {
        throw this.failure(err, target, init.signal, deadline);
      }
      const location = res.headers.get('location');
      if (init.redirect === 'follow' && REDIRECTS.has(res.status) && location) {
        await res.body?.cancel().catch(() => undefined);
        if (hop >= maxRedirects) throw new OutboundError('FETCH_FAILED', `more than ${maxRedirects} redirects from ${url}`);
        let next: URL;
        try {
          next = this.checkUrl(new URL(location, target).href);
        } catch (err) {
          throw err instanceof OutboundError ? err : new OutboundError('FETCH_FAILED', `${target.host} redirected to an invalid address`);
        }
        // Credentials were given for the first origin only: once a hop leaves it they stay behind.
        if (next.origin !== target.origin)
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => NEUTRAL_HEADERS.has(k.toLowerCase())));
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
        }
        target = next;
        continue;
      }
      return this.limited(res, target, init.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES, { caller: init.signal, deadline });
    }
  }

  /** Closes idle connections; requests after this fail. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** The URL parsed, or FORBIDDEN_ADDRESS: not http(s), credentials in it, or a host refused before any lookup. */
  checkUrl(url: string): URL {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new OutboundError('FORBIDDEN_ADDRESS', `not a valid URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new OutboundError('FORBIDDEN_ADDRESS', `only http and https URLs are requested, not ${parsed.protocol}`);
    }
    if (parsed.username || parsed.password)
      throw new OutboundError('FORBIDDEN_ADDRESS', 'URLs with embedded credentials are not requested; use headers');
    const refused = this.policy.refuseHost(parsed.hostname);
    if (refused) throw new OutboundError('FORBIDDEN_ADDRESS', `refusing to connect to ${parsed.hostname}: ${refused}`);
    return parsed;
  }

  private failure(err: unknown, target: URL, caller: AbortSignal | undefined, deadline: AbortSignal | undefined): unknown {
    if (caller?.aborted) return caller.reason ?? err;
    if (deadline?.aborted) return new OutboundError('TIMEOUT', `${target.host} did not answer in time`, { cause: err });
    const own = outboundErrorIn(err);
    if (own) return own;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
    const code = /timeout/i.test(String(cause?.code ?? '')) ? 'TIMEOUT' : 'FETCH_FAILED';
    return new OutboundError(code, `${target.host} could not be reached: ${why}`, { cause: err });
  }

  /** A Response over the same body, failing with TOO_LARGE past `maxBytes` and with our errors otherwise. */
  private async limited(
    res: Awaited<ReturnType<typeof undiciFetch>>,
    target: URL,
    maxBytes: number,
    signals: { caller?: AbortSignal; deadline?: AbortSignal },
  ): Promise<Response> {
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(target, maxBytes);
    }
    const init = { status: res.status, statusText: res.statusText, headers: [...res.headers] };
    let out: Response;
    if (!res.body || NULL_BODY.has(res.status)) {
      await res.body?.cancel().catch(() => undefined);
      out = new Response(null, init);
    } else {
      const reader = res.body.getReader();
      let total = 0;
      const body = new ReadableStream<Uint8Array>({
        pull: async (controller) => {
          try {
            const { done, value } = await reader.read();
            if (done) return controller.close();
            total += value.byteLength;
            if (total > maxBytes) {
              await reader.cancel().catch(() => undefined);
              return controller.error(tooLarge(target, maxBytes));
            }
            controller.enqueue(value);
          } catch (err) {
            controller.error(this.failure(err, target, signals.caller, signals.deadline));
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      out = new Response(body, init);
    }
    Object.defineProperty(out, 'url', { value: target.href });
    return out;
  }
}

function tooLarge(target: URL, maxBytes: number): OutboundError {
  return new OutboundError('TOO_LARGE', `the response from ${target.host} is larger than ${maxBytes} bytes`);
}

let processClient: OutboundHttp | undefined;

/**
 * Sets the process's outbound policy. Only a composition root (main.ts) calls this, from the
 * environment (outboundPolicyFromEnv); one process has one egress policy.
 */
export function configureOutbound(options: OutboundHttpOptions): OutboundHttp {
  const previous = processClient;
  processClient = new OutboundHttp(options);
  void previous?.close().catch(() => undefined);
  return processClient;
}

/** The process's client: the configured one, else the strict default (public addresses only). */
export function outboundHttp(): OutboundHttp {
  return (processClient ??= new OutboundHttp());
}
