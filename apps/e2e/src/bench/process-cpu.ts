import { readFileSync, readdirSync } from 'node:fs';

/**
 * CPU time of the processes a benchmark started, by role, read from /proc around a measured window.
 *
 * Roles: every descendant of this process, named from its command line (`gateway`, `content`, …
 * from `dist/apps/<app>/`, `pglite` for the PGlite server, `nats` for nats-server, `standalone`), and
 * the machine's PostgreSQL backends serving `database` (`postgres`). Requests per second move with
 * the machine's mood; CPU per request per role says which process a change made busier.
 */
export type CpuSample = Map<number, { role: string; ticks: number }>;

const TICK_US = 1e6 / 100; // USER_HZ on Linux

/** utime + stime of one process (all its threads), in clock ticks; undefined when it is gone. */
function ticksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The database a PostgreSQL backend serves, from its title (`postgres: [15/main: ]user database host state`). */
export function backendDatabase(args: string): string | undefined {
  return /^postgres: (?:\S+: )?\S+ (\S+) \S+\(\d+\)/.exec(args)?.[1];
}

export function roleOf(args: string): string | undefined {
  const app = /dist\/apps\/([a-z-]+)\/src\/main\.js/.exec(args);
  if (app) return app[1];
  if (/pglite-server\.js/.test(args)) return 'pglite';
  if (/nats-server/.test(args)) return 'nats';
  if (backendDatabase(args) !== undefined) return 'postgres';
  return undefined;
}

/** The CPU ticks of this process's descendants and of the PostgreSQL backends of `database`, by pid, with their roles. */
export function sampleCpu(database?: string): CpuSample {
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const parents = new Map<number, number | undefined>(pids.map((p) => [p, parentOf(p)]));
  const isDescendant = (pid: number): boolean => {
    for (let p = parents.get(pid), hops = 0; p !== undefined && p > 1 && hops < 64; p = parents.get(p), hops++) {
      if (p === process.pid) return true;
    }
    return false;
  };
  const sample: CpuSample = new Map();
  for (const pid of pids) {
    const args = cmdline(pid);
    const backend = database !== undefined && backendDatabase(args) === database;
    if (!backend && !isDescendant(pid)) continue;
    const role = backend ? 'postgres' : roleOf(args);
    const ticks = role === undefined ? undefined : ticksOf(pid);
    if (role === undefined || ticks === undefined) continue;
    sample.set(pid, { role, ticks });
  }
  return sample;
}

/**
 * CPU microseconds per request by role between two samples, process by process: one started in
 * between counts from 0. One gone by the second sample (a PostgreSQL backend whose connection
 * closed) is left out: what it spent in the window is unknown, so a role can be undercounted, never
 * negative (summing by role first made a closed backend's whole past a negative share).
 */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): Record<string, number> {
  const byRole = new Map<string, number>();
  for (const [pid, { role, ticks }] of after) {
    const earlier = before.get(pid);
    const since = earlier?.role === role ? earlier.ticks : 0;
    byRole.set(role, (byRole.get(role) ?? 0) + Math.max(0, ticks - since));
  }
  const out: Record<string, number> = {};
  let total = 0;
  for (const [role, ticks] of byRole) {
    const us = (ticks * TICK_US) / Math.max(1, requests);
    out[`cpu_us_${role}`] = Math.round(us);
    total += us;
  }
  out['cpu_us_total'] = Math.round(total);
  return out;
}
