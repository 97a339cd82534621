import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/**
 * PGlite has no postmaster.pid: two processes opening one data directory (say, the standalone app
 * and a separate pglite-server) would both write to it and corrupt it. A pid file next to the
 * directory refuses the second opener; a file left by a dead process is taken over.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  const path = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return { path, release: () => removeIfOurs(path) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = readOwner(path);
      if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
        throw new Error(`data directory ${dataDir} is in use by process ${owner} (lock file ${path})`);
      }
      // Stale, unreadable, or left by this very process after a crash of its previous instance.
      unlinkSync(path);
    }
  }
  throw new Error(`could not lock data directory ${dataDir}`);
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeIfOurs(path: string): void {
  if (readOwner(path) !== process.pid) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}
