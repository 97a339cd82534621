import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of every thread of this process's descendants (the services a benchmark started), from
 * /proc (Linux). On a machine shared with other work, wall-clock rates move with the load; the CPU
 * seconds a workload costs, and how they split over threads, barely do.
 */
export type CpuSample = Map<string, { process: string; seconds: number }>;

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

function stat(path: string): { ppid: number; seconds: number } | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), seconds: (Number(fields[11]) + Number(fields[12])) / TICKS };
  } catch {
    return undefined;
  }
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(`/proc/${entry}/stat`);
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(Number(entry));
    children.set(s.ppid, list);
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

function processName(pid: number): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = args.find((a) => a.endsWith('.js')) ?? args[0] ?? String(pid);
    return script.replace(/^.*\/dist\//, '').replace(/\/src\/main\.js$/, '');
  } catch {
    return String(pid);
  }
}

/** Every thread of every descendant process of `root` (default: this process), keyed `pid/tid`. */
export function sampleCpu(root = process.pid): CpuSample {
  const sample: CpuSample = new Map();
  if (process.platform !== 'linux') return sample;
  for (const pid of descendants(root)) {
    const name = processName(pid);
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    // Threads are named by start order: `main`, then `#1`, `#2`… (tids grow; Node leaves them unnamed).
    tids.sort((a, b) => Number(a) - Number(b));
    tids.forEach((tid, i) => {
      const s = stat(`/proc/${pid}/task/${tid}/stat`);
      if (s) sample.set(`${pid}/${tid}`, { process: `${name} ${tid === String(pid) ? 'main' : `#${i}`}`, seconds: s.seconds });
    });
  }
  return sample;
}

export interface CpuUse {
  /** CPU seconds of all the services between the samples. */
  total_s: number;
  /** The busiest threads: process, CPU seconds. */
  threads: { process: string; seconds: number }[];
}

export function cpuBetween(before: CpuSample, after: CpuSample, top = 6): CpuUse {
  const threads = [...after].map(([key, a]) => ({ process: a.process, seconds: a.seconds - (before.get(key)?.seconds ?? 0) }));
  threads.sort((x, y) => y.seconds - x.seconds);
  return {
    total_s: Number(threads.reduce((s, t) => s + t.seconds, 0).toFixed(1)),
    threads: threads.slice(0, top).map((t) => ({ process: t.process, seconds: Number(t.seconds.toFixed(1)) })),
  };
}
