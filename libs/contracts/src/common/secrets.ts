/**
 * Secrets are write-only (docs/security.md): a stored credential is never read back by any role.
 * Every response that carries a member which can hold one (provider `user_keys`, webhook
 * `headers`, link `headers`/`cookies`/`localstorage`, file `password`/`extra_headers`) passes it
 * through `maskSecrets`, and every write that may receive such a response back goes through
 * `keepMaskedSecrets`, so sending the mask back keeps the stored secret instead of storing the mask.
 * One function for every service: content, accounts and understanding mask the same way.
 */
export const SECRET_MASK = '********';

/** Members whose every value is a secret, whatever its name (`Authorization`, a session cookie…). */
const SECRET_MAPS = /^(headers|extra_headers|cookies|localstorage)$/i;
/** A string member so named is a credential (api_key, client_secret, access_token, password, sas…). */
const SECRET_NAME = /key|secret|token|passw|pwd|auth|credential|cookie|signature|bearer|session|private|sas/i;
/**
 * Words of a query parameter's name that say it carries a credential (?api_key=, ?apiKey=,
 * ?access_token=, ?X-Amz-Signature=, ?sig=, ?code= for function keys…). Whole words, so that
 * ?keyword= or ?postcode= stay readable.
 */
const SECRET_PARAM_WORDS = new Set([
  'key',
  'apikey',
  'secret',
  'token',
  'auth',
  'authorization',
  'password',
  'passwd',
  'pwd',
  'pass',
  'sig',
  'signature',
  'code',
  'credential',
  'credentials',
  'session',
  'sessionid',
  'sid',
  'jwt',
]);
const isSecretParam = (name: string): boolean =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((word) => SECRET_PARAM_WORDS.has(word));
const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A URL with its user information and its credential-like query parameters masked; anything else
 * (not an absolute URL, or one without credentials) is returned as it was, byte for byte.
 */
export function maskUrlCredentials(value: string): string {
  if (!ABSOLUTE_URL.test(value)) return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  const params = [...url.searchParams.keys()].filter(isSecretParam);
  if (!url.username && !url.password && params.length === 0) return value;
  if (url.username) url.username = SECRET_MASK;
  if (url.password) url.password = SECRET_MASK;
  for (const name of new Set(params)) url.searchParams.set(name, SECRET_MASK);
  return url.toString();
}

function mask(value: unknown, name: string | undefined, wholeMap: boolean): unknown {
  if (typeof value === 'string') {
    if (value !== '' && (wholeMap || (name !== undefined && SECRET_NAME.test(name)))) return SECRET_MASK;
    return maskUrlCredentials(value);
  }
  if (Array.isArray(value)) return value.map((v) => mask(v, name, wholeMap));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k, wholeMap || SECRET_MAPS.test(k))]));
  return value;
}

/**
 * The value as a response may show it: every secret string replaced by `SECRET_MASK` (names,
 * models, addresses and numbers kept, so a client still sees what is configured).
 */
export function maskSecrets<T>(value: T): T {
  return mask(value, undefined, false) as T;
}

function restore(incoming: unknown, current: unknown, masked: unknown): unknown {
  if (typeof incoming === 'string') return typeof current === 'string' && masked !== current && incoming === masked ? current : incoming;
  if (Array.isArray(incoming)) {
    return incoming.map((v, i) =>
      restore(v, Array.isArray(current) ? current[i] : undefined, Array.isArray(masked) ? masked[i] : undefined),
    );
  }
  if (isRecord(incoming)) {
    return Object.fromEntries(
      Object.entries(incoming).map(([k, v]) => [
        k,
        restore(v, isRecord(current) ? current[k] : undefined, isRecord(masked) ? masked[k] : undefined),
      ]),
    );
  }
  return incoming;
}

/**
 * `incoming` with every string that is exactly what a response showed in place of the stored
 * secret at the same place (the mask, or a URL with masked credentials) replaced by that stored
 * secret: a client that reads a configuration and sends it back unchanged keeps its credentials.
 * A changed value, or one where nothing was stored, is taken as sent.
 */
export function keepMaskedSecrets<T>(incoming: T, current: unknown): T {
  if (current === undefined || current === null) return incoming;
  return restore(incoming, current, maskSecrets(current)) as T;
}

/** Whether a value holds a mask anywhere (so a write need not look up what it would restore). */
export function containsSecretMask(value: unknown): boolean {
  return JSON.stringify(value ?? null).includes(SECRET_MASK);
}
