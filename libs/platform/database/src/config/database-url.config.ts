/** The environment as a plain record, so callers pass `process.env` and tests pass literals. */
export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_DATA_DIR = './data/pg';

/** `content` → `CONTENT_DATABASE_URL`; `read-model` → `READ_MODEL_DATABASE_URL`. */
export function serviceDatabaseUrlVariable(service: string): string {
  const name = service
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_');
  if (!name || name === '_') throw new Error(`invalid service name "${service}"`);
  return `${name}_DATABASE_URL`;
}

/**
 * `<SERVICE>_DATABASE_URL`, then `DATABASE_URL`. Undefined when neither is set: the service then
 * uses the embedded PGlite. A set but malformed value is an error rather than a silent fallback.
 */
export function databaseUrlFromEnv(env: Env, service: string): string | undefined {
  for (const variable of [serviceDatabaseUrlVariable(service), 'DATABASE_URL']) {
    const value = env[variable]?.trim();
    if (value) return validateDatabaseUrl(value, variable);
  }
  return undefined;
}

export function validateDatabaseUrl(value: string, source = 'database URL'): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`${source} is not a valid URL`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`${source} must start with postgres:// or postgresql://, got ${parsed.protocol}//`);
  }
  if (!parsed.hostname) throw new Error(`${source} has no host`);
  return value;
}

export interface PgliteServerEnv {
  dataDir: string;
  host: string;
  port: number;
  maxConnections?: number;
}

/** `PGLITE_DATA_DIR` (default ./data/pg), `PGLITE_HOST` (127.0.0.1), `PGLITE_PORT` (0 = any free). */
export function pgliteServerEnv(env: Env): PgliteServerEnv {
  const maxConnections = parseInteger(env.PGLITE_MAX_CONNECTIONS, 'PGLITE_MAX_CONNECTIONS', 1, 10_000);
  return {
    dataDir: env.PGLITE_DATA_DIR?.trim() || DEFAULT_DATA_DIR,
    host: env.PGLITE_HOST?.trim() || '127.0.0.1',
    port: parseInteger(env.PGLITE_PORT, 'PGLITE_PORT', 0, 65535) ?? 0,
    ...(maxConnections !== undefined ? { maxConnections } : {}),
  };
}

function parseInteger(raw: string | undefined, variable: string, min: number, max: number): number | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new Error(`${variable} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}
