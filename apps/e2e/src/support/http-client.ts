/** A minimal HTTP client for journeys: every call returns status, headers and parsed body. */
export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export type Credential = { header: string; value: string } | null;

export const apiKey = (token: string): NonNullable<Credential> => ({ header: 'X-SVC-SERVICEACCOUNT', value: `Bearer ${token}` });
export const bearer = (token: string): NonNullable<Credential> => ({ header: 'Authorization', value: `Bearer ${token}` });

export class HttpClient {
  constructor(readonly baseUrl: string) {}

  async call<T = unknown>(
    method: string,
    path: string,
    options: { credential?: Credential; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.credential) headers[options.credential.header] = options.credential.value;
    let payload: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.text();
    let body: unknown = text;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: body as T };
  }

  /** Polls `probe` until it returns a value, or fails after `timeoutMs`. */
  async eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const value = await probe();
      if (value !== undefined) return value;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
}
