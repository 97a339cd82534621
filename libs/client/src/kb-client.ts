import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './generated/openapi';

/** The Knowledge Box Service's typed HTTP client: every path, parameter and body of `openapi.json`. */
export type KbClient = Client<paths>;

/**
 * One credential at most (the service refuses a request with two): an API key of a Knowledge Box
 * (or a temporal key minted from one), a user token or personal access token, or an
 * understanding-API client key. None for the public routes (sign-up, sign-in).
 */
export type KbCredential =
  | { apiKey: string; token?: never; uaKey?: never }
  | { token: string; apiKey?: never; uaKey?: never }
  | { uaKey: string; apiKey?: never; token?: never }
  | { apiKey?: never; token?: never; uaKey?: never };

export type KbClientOptions = KbCredential & {
  /** Where the service answers, e.g. `https://kb.example.com` (the paths start with `/api/v1`). */
  baseUrl: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: ClientOptions['fetch'];
};

/** The header each credential travels in (`Bearer <token>` in all three). */
export const CREDENTIAL_HEADER = { apiKey: 'X-SVC-SERVICEACCOUNT', token: 'Authorization', uaKey: 'X-SVC-UAKEY' } as const;

/** A client for the service at `baseUrl`, sending the given credential with every request. */
export function createKbClient(options: KbClientOptions): KbClient {
  const headers: Record<string, string> = {};
  for (const kind of ['apiKey', 'token', 'uaKey'] as const) {
    const value = options[kind];
    if (value !== undefined) headers[CREDENTIAL_HEADER[kind]] = `Bearer ${value}`;
  }
  if (Object.keys(headers).length > 1)
    throw new Error('createKbClient: give one credential (apiKey, token or uaKey), the service refuses two');
  return createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), headers, ...(options.fetch ? { fetch: options.fetch } : {}) });
}
