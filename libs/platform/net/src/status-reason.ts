/**
 * A short reason of our own for a provider's HTTP status. Error messages built from it never carry
 * the remote body: a provider URL can point at an internal service, whose answer is not ours to echo.
 */
export function statusReason(status: number): string {
  const known: Record<number, string> = {
    400: 'bad request',
    401: 'credentials refused',
    403: 'access denied',
    404: 'not found',
    405: 'method not allowed',
    408: 'request timeout',
    409: 'conflict',
    413: 'request too large',
    415: 'unsupported media type',
    422: 'request rejected',
    429: 'rate limited',
    500: 'internal error',
    501: 'not implemented',
    502: 'bad gateway',
    503: 'unavailable',
    504: 'gateway timeout',
    529: 'overloaded',
  };
  const reason = known[status];
  if (reason) return reason;
  if (status >= 300 && status < 400) return 'redirect not followed';
  if (status >= 400 && status < 500) return 'request refused';
  return 'server error';
}

/** `<provider> answered HTTP <status> (<reason>)`: the one form provider failures take in messages. */
export function httpFailure(provider: string, status: number): string {
  return `${provider} answered HTTP ${status} (${statusReason(status)})`;
}
