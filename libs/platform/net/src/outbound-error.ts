/**
 * Why an outbound request failed, in words of our own: callers turn it into their domain's error
 * (an extraction error, a generation error, a webhook attempt) without reading the remote's body.
 *  - FORBIDDEN_ADDRESS: the URL, its scheme or the address it leads to is refused by the policy;
 *  - FETCH_FAILED: the connection or the exchange failed (DNS, refused, reset, too many redirects);
 *  - TIMEOUT: the request's deadline passed;
 *  - TOO_LARGE: the response body is larger than the request allows.
 */
export type OutboundErrorCode = 'FORBIDDEN_ADDRESS' | 'FETCH_FAILED' | 'TIMEOUT' | 'TOO_LARGE';

export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/** The OutboundError in `err` or its `cause` chain (undici wraps connector errors in "fetch failed"). */
export function outboundErrorIn(err: unknown): OutboundError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof OutboundError) return e;
  }
  return undefined;
}
