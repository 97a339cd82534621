import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './env-scan';

/**
 * `npm ci` (Dockerfiles, CI) refuses a lockfile that lacks a package some dependency declares,
 * including the optional native packages of other platforms (@swc/core-darwin-arm64, …) that an
 * install on Linux does not fetch. Every declared dependency must resolve to a lockfile entry the
 * way Node resolves it (the nearest node_modules up the tree).
 */
test('package-lock.json has an entry for every dependency every package declares, on every platform', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    lockfileVersion: number;
    packages: Record<
      string,
      {
        dependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
        peerDependenciesMeta?: Record<string, { optional?: boolean }>;
        devDependencies?: Record<string, string>;
        link?: boolean;
      }
    >;
  };
  expect(lock.lockfileVersion).toBeGreaterThanOrEqual(2);
  const missing: string[] = [];
  const resolves = (from: string, name: string) => {
    let base = from;
    for (;;) {
      if (lock.packages[`${base ? `${base}/` : ''}node_modules/${name}`]) return true;
      if (!base) return false;
      const cut = base.lastIndexOf('/node_modules/');
      base = cut < 0 ? '' : base.slice(0, cut);
    }
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (entry.link) continue;
    const declared = { ...entry.dependencies, ...entry.optionalDependencies, ...(path === '' ? entry.devDependencies : {}) };
    for (const name of Object.keys(declared)) if (!resolves(path, name)) missing.push(`${path || '(root)'} → ${name}`);
    for (const name of Object.keys(entry.peerDependencies ?? {})) {
      if (!entry.peerDependenciesMeta?.[name]?.optional && !resolves(path, name)) missing.push(`${path} → ${name} (peer)`);
    }
  }
  expect(missing).toEqual([]);
  // The native packages of other platforms are there (the failure this guards against).
  expect(Object.keys(lock.packages)).toEqual(
    expect.arrayContaining(['node_modules/@swc/core-darwin-arm64', 'node_modules/@swc/core-win32-x64-msvc']),
  );
});
