import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from './processes';

/**
 * A standalone's database as its first start leaves it before it serves anything: a fresh PGlite
 * (initdb, in WebAssembly) with every service's migrations applied. Making that takes 4–8 s of a
 * standalone's ~10 s start on this machine; the e2e suites start a fresh standalone some forty
 * times, so it is made once per build and copied (~0.1 s) into each new DATA_DIR. What the start
 * then does (bootstrap, the bus's tables, Nest) is what it always does on a persisted directory.
 * `standalone.e2e-spec.ts` still starts from an empty directory, as a user does.
 *
 * The copy is keyed by the built migrations and database code and the PGlite version, so a changed
 * migration makes a new one; it lives in the system's temp directory (one per key, made under a
 * temporary name and renamed, so concurrent test runs never see half of one). A template is marked
 * each time a test process first uses it; those of other keys unused for a day are removed.
 */
export function seedStandaloneDatabase(dataDir: string): void {
  cpSync(template('standalone', MAKE_STANDALONE_TEMPLATE, true), join(dataDir, 'pg'), { recursive: true });
}

/**
 * An empty PGlite cluster (initdb only) at `pgDir`, for the distributed topology's content database:
 * the content service runs its migrations there at start, as on any new cluster.
 */
export function seedEmptyCluster(pgDir: string): void {
  cpSync(template('empty', MAKE_EMPTY_TEMPLATE, false), pgDir, { recursive: true });
}

/** Made in a child process: the built standalone's own schema list and data-source code, as its main.ts runs them. */
const MAKE_STANDALONE_TEMPLATE = `
require('reflect-metadata');
const { join } = require('node:path');
const db = require(join(process.cwd(), 'dist', 'libs', 'platform', 'database', 'src', 'index.js'));
const { SERVICE_SCHEMAS } = require(join(process.cwd(), 'dist', 'apps', 'standalone', 'src', 'schemas.js'));
(async () => {
  const dataDir = process.argv[1];
  for (const [service, s] of Object.entries(SERVICE_SCHEMAS)) {
    const ds = await db.createServiceDataSource({
      service, schema: s.schema, url: undefined, dataDir, entities: s.entities, migrations: s.migrations, runMigrations: true,
    });
    await db.closeServiceDataSource(ds);
  }
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
`;

/** The pglite-server's own start and stop, with nothing served in between. */
const MAKE_EMPTY_TEMPLATE = `
const { join } = require('node:path');
const { main } = require(join(process.cwd(), 'dist', 'libs', 'platform', 'database', 'src', 'bin', 'pglite-server.js'));
main({ env: { PGLITE_DATA_DIR: process.argv[1], PGLITE_PORT: '0' }, until: Promise.resolve('made'), log: () => undefined })
  .then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
`;

const cached = new Map<string, string>();

function template(kind: string, script: string, migrations: boolean): string {
  const known = cached.get(kind);
  if (known && existsSync(known)) return known;
  const dir = join(tmpdir(), `kb-e2e-pg-template-${kind}-${templateKey(migrations)}`);
  if (!existsSync(dir)) {
    const work = mkdtempSync(join(tmpdir(), 'kb-e2e-pg-template-making-'));
    try {
      const made = spawnSync(process.execPath, ['-e', script, join(work, 'pg')], {
        cwd: REPO_ROOT,
        env: { ...process.env, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 180_000,
      });
      if (made.status !== 0) throw new Error(`making the ${kind} database template failed: ${made.stderr || made.error?.message}`);
      try {
        renameSync(join(work, 'pg'), dir);
      } catch (err) {
        // Another run made it first.
        if (!existsSync(dir)) throw err;
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  // Marked as used (once per test process), so that templates of older builds can be told apart.
  const now = new Date();
  utimesSync(dir, now, now);
  removeUnused(kind, dir);
  cached.set(kind, dir);
  return dir;
}

/**
 * Templates of other builds unused for a day, and half-made ones a killed run left: no test run
 * lasts that long, and each is ~40 MB.
 */
const UNUSED_MS = 24 * 3600_000;

function removeUnused(kind: string, keep: string): void {
  const prefixes = [`kb-e2e-pg-template-${kind}-`, 'kb-e2e-pg-template-making-'];
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (!prefixes.some((prefix) => name.startsWith(prefix)) || path === keep) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > UNUSED_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // removed by another run meanwhile
    }
  }
}

/** The built database code (and migrations when they are applied), and the PGlite version. */
function templateKey(migrations: boolean): string {
  const hash = createHash('sha256');
  const dist = join(REPO_ROOT, 'dist', 'libs');
  // Every lib's migrations folder: a schema owned by a lib the list does not name yet still changes the key.
  const roots = [
    ...(migrations
      ? readdirSync(dist)
          .sort()
          .map((lib) => join(dist, lib, 'src', 'migrations'))
          .filter((dir) => existsSync(dir))
      : []),
    ...(migrations ? [join(REPO_ROOT, 'dist', 'apps', 'standalone', 'src', 'schemas.js')] : []),
    join(dist, 'platform', 'database', 'src'),
  ];
  for (const root of roots) {
    if (!existsSync(root)) throw new Error(`${root} is missing: run \`npm run build\` first`);
    for (const file of filesUnder(root)) hash.update(relative(REPO_ROOT, file)).update(readFileSync(file));
  }
  hash.update(readFileSync(join(REPO_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  return hash.digest('hex').slice(0, 16);
}

function filesUnder(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}
