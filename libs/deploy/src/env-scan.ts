import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Which environment variables each app reads, found in its code: every source file reachable from
 * the app's entry point by imports (relative and `@kb/*` aliases), searched for the ways this code
 * base reads the environment — `EnvReader` calls (`reader.int('X', …)`), `env['X']`, `env.X`,
 * `process.env…` — plus the service database URLs (`<SERVICE>_DATABASE_URL`, `DATABASE_URL`),
 * whose names are computed. Reachability over-approximates (a lib's index pulls in more than the
 * app calls), which is what the checks need: every provided variable must be readable, every
 * variable that has no default must be provided.
 */
export const ROOT = resolve(__dirname, '..', '..', '..');

export const ENTRY_POINTS = {
  gateway: 'apps/gateway/src/main.ts',
  accounts: 'apps/accounts/src/main.ts',
  content: 'apps/content/src/main.ts',
  understanding: 'apps/understanding/src/main.ts',
  reporting: 'apps/reporting/src/main.ts',
  standalone: 'apps/standalone/src/main.ts',
  migrate: 'apps/standalone/src/migrate.ts',
} as const;
export type EntryPoint = keyof typeof ENTRY_POINTS;

export interface EnvRead {
  name: string;
  /** Read with no default: the app refuses to start without it (when its branch is taken). */
  required: boolean;
  /** Where, relative to the repository root. */
  file: string;
}

const READER_CALL = /\.(string|optional|int|bool|oneOf|list|url)\(\s*'([A-Z][A-Z0-9_]*)'\s*(\)|,)/g;
const INDEXED = /\benv\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g;
const DOTTED = /\benv\??\.([A-Z][A-Z0-9_]*)\b/g;
/** `serviceDataSource(env, runtime, 'content', …)`: that service's URL variable. */
const SERVICE_DATA_SOURCE = /serviceDataSource\(\s*env\s*,\s*\w+\s*,\s*'([a-z-]+)'/g;
/** The migration registry of `migrate.ts`: `content: { schema: 'content', …`. */
const MIGRATION_REGISTRY = /^\s*([a-z]+): \{ schema: '[a-z]+'/gm;
/** The standalone app's `source('accounts', …)` helper around `databaseUrlFromEnv(env, service)`. */
const STANDALONE_SOURCE = /\bsource\(\s*'([a-z-]+)'/g;
const IMPORTS = /(?:from|import|require\()\s*'([^']+)'/g;

function aliases(): Map<string, string> {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return new Map(Object.entries(config.compilerOptions.paths).map(([alias, [target]]) => [alias, join(ROOT, target as string)]));
}

function resolveImport(from: string, spec: string, aliasMap: Map<string, string>): string | undefined {
  const base = aliasMap.get(spec) ?? (spec.startsWith('.') ? resolve(dirname(from), spec) : undefined);
  if (!base) return undefined;
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const isTestFile = (file: string) => /\.(spec|int-spec|e2e-spec)\.ts$/.test(file) || /\/(test|testing)\//.test(file);

/** Source files reachable from an entry point (tests and test support excluded). */
export function reachableFiles(entry: string): string[] {
  const aliasMap = aliases();
  const seen = new Set<string>();
  const queue = [join(ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file) || isTestFile(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORTS)) {
      const target = resolveImport(file, match[1] as string, aliasMap);
      if (target && !seen.has(target)) queue.push(target);
    }
  }
  return [...seen].sort();
}

/** Every read in one source text. */
export function envReadsIn(source: string, file: string): EnvRead[] {
  const reads: EnvRead[] = [];
  for (const m of source.matchAll(READER_CALL)) {
    reads.push({ name: m[2] as string, required: (m[1] === 'string' || m[1] === 'url') && m[3] === ')', file });
  }
  for (const pattern of [INDEXED, DOTTED]) {
    for (const m of source.matchAll(pattern)) reads.push({ name: m[1] as string, required: false, file });
  }
  const services = [...source.matchAll(SERVICE_DATA_SOURCE), ...source.matchAll(MIGRATION_REGISTRY)].map((m) => m[1] as string);
  if (source.includes('databaseUrlFromEnv(env, service)'))
    services.push(...[...source.matchAll(STANDALONE_SOURCE)].map((m) => m[1] as string));
  for (const service of services) reads.push({ name: `${service.toUpperCase().replace(/-/g, '_')}_DATABASE_URL`, required: false, file });
  // databaseUrlFromEnv falls back from `<SERVICE>_DATABASE_URL` to this one.
  if (/for \(const variable of \[serviceDatabaseUrlVariable\(service\), 'DATABASE_URL'\]\)/.test(source))
    reads.push({ name: 'DATABASE_URL', required: false, file });
  return reads;
}

/** The variables an entry point reads, by name (a name is required if any of its reads is). */
export function envReads(entry: EntryPoint): Map<string, EnvRead> {
  const byName = new Map<string, EnvRead>();
  for (const file of reachableFiles(ENTRY_POINTS[entry])) {
    for (const read of envReadsIn(readFileSync(file, 'utf8'), relative(ROOT, file))) {
      const known = byName.get(read.name);
      if (!known || (read.required && !known.required)) byName.set(read.name, read);
    }
  }
  return byName;
}
