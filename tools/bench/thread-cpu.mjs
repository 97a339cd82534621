// Where a standalone's CPU goes per request, thread by thread, for one or more built trees side by side.
//
//   node tools/bench/thread-cpu.mjs [--rounds N] [--seconds S] [--connections C] [--interleave] [--create] <tree> [<tree> …]
//
// Each <tree> is a checkout with a build in dist/ (this tree, or a worktree that bench:compare kept
// under tmp/compare/). For each round and each tree in turn: start the standalone from that tree's
// dist with its own data folder, create one resource with the bootstrap API key, warm up 3 s, then
// GET it for S seconds with autocannon while reading /proc/<pid>/task/*/stat before and after. It
// prints, per tree, the median over rounds of the requests per second and of each thread group's CPU
// microseconds per request. CPU per request is what a code change moves; the rate also moves with the
// machine's mood, which is why trees alternate within each round.
//
// --interleave starts every tree's standalone once, side by side, and then measures short windows of
// each in turn (A B, B A, A B, … so neither always goes first), many rounds: the other work on a shared
// machine changes over tens of seconds, so two windows a few seconds apart met nearly the same load,
// where two runs with a start-up between them did not. It prints each round's ratio to the first tree
// and their median with the middle half (quartiles) besides the smallest and largest. Use it on a busy
// machine, e.g. `--interleave --rounds 20 --seconds 3`.
//
// THREAD_CPU_NODE_ARGS passes options to each standalone's node (a CPU profile: `--cpu-prof --cpu-prof-dir=<dir>`).
//
// Thread groups: `main` (the event loop: gateway, services, bus), `db` (the embedded database's worker
// thread, which runs every statement), `gc` (V8's helper threads), `libuv` (the file and DNS pool), `other`.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const [v] = argv.splice(i, 2).slice(1);
  return Number(v);
};
const rounds = opt('rounds', 3);
const seconds = opt('seconds', 10);
const connections = opt('connections', 8);
const flag = (name) => {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) argv.splice(i, 1);
  return i >= 0;
};
const interleave = flag('interleave');
// --create measures the write path instead: POST a resource (a title and a ~1 KB text field, as
// the create-resource benchmark does) with the processing workers off.
const create = flag('create');
const help = flag('help') || flag('h');
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(22);
const unknown = argv.filter((a) => a.startsWith('-'));
const trees = argv.filter((a) => !a.startsWith('-')).map((t) => resolve(t));
if (help || unknown.length > 0 || trees.length === 0) {
  if (unknown.length > 0) console.error(`unknown option: ${unknown.join(' ')}`);
  (help ? console.log : console.error)(
    'usage: node tools/bench/thread-cpu.mjs [--rounds N] [--seconds S] [--connections C] [--interleave] [--create] <tree> [<tree> …]',
  );
  process.exit(help ? 0 : 2);
}
const TICK_US = 1e6 / 100; // USER_HZ

const freePort = () =>
  new Promise((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

function threads(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { comm, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The database's worker thread is the busiest thread that is neither the main one nor a known helper. */
function group(tid, comm, pid, dbTid) {
  if (tid === String(pid)) return 'main';
  if (tid === dbTid) return 'db';
  if (/^V8 |^DelayedTask/.test(comm)) return 'gc';
  if (/^libuv/.test(comm)) return 'libuv';
  return 'other';
}

async function waitReady(url, child) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('not ready in 120 s');
}

/** Starts a tree's standalone with its own data folder, creates one resource and waits until it is processed. */
async function start(tree) {
  const dataDir = mkdtempSync(join(tmpdir(), 'thread-cpu-'));
  const port = await freePort();
  const nodeArgs = (process.env['THREAD_CPU_NODE_ARGS'] ?? '').split(' ').filter(Boolean); // e.g. --cpu-prof --cpu-prof-dir=…
  const child = spawn(process.execPath, [...nodeArgs, join(tree, 'dist/apps/standalone/src/main.js')], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      DATA_DIR: dataDir,
      ACCESS_CACHE_TTL_SECONDS: '5',
      ...(create ? { PROCESSING_WORKERS_ENABLED: 'false' } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(`${base}/health/ready`, child);
    const boot = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8'));
    const headers = { 'X-SVC-SERVICEACCOUNT': `Bearer ${boot.api_key.token}`, 'content-type': 'application/json' };
    if (create) {
      const target = {
        url: `${base}/api/v1/kb/${boot.kb.id}/resources`,
        headers,
        method: 'POST',
        body: JSON.stringify({ title: 'Benchmark resource', texts: { body: { body: TEXT, format: 'PLAIN' } } }),
      };
      await autocannon({ ...target, connections, duration: 3 });
      return { child, target, stop };
    }
    const res = await fetch(`${base}/api/v1/kb/${boot.kb.id}/resources`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        title: 'Benchmark resource',
        slug: `bench-${Date.now()}`,
        texts: { body: { body: 'Some text to read back.' } },
      }),
    });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
    const { uuid } = await res.json();
    const url = `${base}/api/v1/kb/${boot.kb.id}/resource/${uuid}`;
    // Processing of the resource (model load included) would otherwise share the measured window.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const r = await (await fetch(url, { headers })).json();
      if (r.metadata?.status === 'PROCESSED') break;
      if (Date.now() > deadline) throw new Error(`not processed in 120 s: ${r.metadata?.status}`);
      await new Promise((ok) => setTimeout(ok, 250));
    }
    await new Promise((ok) => setTimeout(ok, 2_000));
    await autocannon({ url, headers, connections, duration: 3 });
    return { child, target: { url, headers }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** GETs the resource for `duration` seconds and reads every thread's CPU time around it. */
async function measure({ child, target }, duration) {
  {
    const before = threads(child.pid);
    const result = await autocannon({ ...target, connections, duration });
    const after = threads(child.pid);
    if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
    const used = [...after].map(([tid, t]) => [tid, t.comm, t.ticks - (before.get(tid)?.ticks ?? 0)]);
    const dbTid = used
      .filter(([tid, comm]) => tid !== String(child.pid) && !/^V8 |^DelayedTask|^libuv/.test(comm))
      .sort((a, b) => b[2] - a[2])[0]?.[0];
    const requests = result.requests.total;
    const cpu = {};
    for (const [tid, comm, ticks] of used) {
      const g = group(tid, comm, child.pid, dbTid);
      cpu[g] = (cpu[g] ?? 0) + (ticks * TICK_US) / requests;
    }
    if (process.env['THREAD_CPU_VERBOSE']) {
      for (const [tid, comm, ticks] of used.filter((u) => u[2] > 0).sort((a, b) => b[2] - a[2])) {
        console.log(
          `  ${tid} ${comm.padEnd(16)} ${group(tid, comm, child.pid, dbTid).padEnd(6)} ${((ticks * TICK_US) / requests).toFixed(0)} µs/request`,
        );
      }
    }
    return { rate: requests / duration, p99: result.latency.p99, cpu };
  }
}

async function once(tree) {
  const running = await start(tree);
  try {
    return await measure(running, seconds);
  } finally {
    await running.stop();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  return s[Math.floor(i)] + (s[Math.ceil(i)] - s[Math.floor(i)]) * (i - Math.floor(i));
};
const total = (run) => Object.values(run.cpu).reduce((a, b) => a + b, 0);

const runs = new Map(trees.map((t) => [t, []]));
const running = new Map();
try {
  if (interleave) for (const tree of trees) running.set(tree, await start(tree));
  for (let r = 0; r < rounds; r++) {
    // Interleaved, the order turns every round so that no tree always follows the same one.
    const order = interleave && r % 2 === 1 ? [...trees].reverse() : trees;
    for (const tree of order) {
      const run = interleave ? await measure(running.get(tree), seconds) : await once(tree);
      runs.get(tree).push(run);
      const cpu = Object.entries(run.cpu)
        .map(([g, us]) => `${g} ${us.toFixed(0)}`)
        .join(', ');
      console.log(`round ${r + 1} ${tree}: ${run.rate.toFixed(0)} req/s, p99 ${run.p99} ms, µs/request: ${cpu}`);
    }
  }
} finally {
  for (const r of running.values()) await r.stop();
}
console.log(`\nmedians over ${rounds} rounds (${connections} connections, ${seconds} s):`);
for (const [tree, rs] of runs) {
  const groups = [...new Set(rs.flatMap((r) => Object.keys(r.cpu)))].sort();
  const cpu = groups.map((g) => `${g} ${median(rs.map((r) => r.cpu[g] ?? 0)).toFixed(0)}`).join(', ');
  console.log(`${tree}: ${median(rs.map((r) => r.rate)).toFixed(0)} req/s, µs/request total ${median(rs.map(total)).toFixed(0)} (${cpu})`);
}
// Each round's ratio to the first tree: the pairs met the same moment of the machine.
const [first, ...others] = trees;
for (const tree of others) {
  const line = (label, f) => {
    const ratios = runs.get(tree).map((run, i) => f(run) / f(runs.get(first)[i]));
    const q = (x) => quantile(ratios, x).toFixed(2);
    console.log(`  ${label.padEnd(22)} ${q(0.5)}×  (quartiles ${q(0.25)}–${q(0.75)}, all ${q(0)}–${q(1)})`);
  };
  console.log(`\n${tree} / ${first}, per round:`);
  line('requests/s', (run) => run.rate);
  line('CPU µs per request', total);
  for (const g of [...new Set(runs.get(tree).flatMap((r) => Object.keys(r.cpu)))].sort()) line(`  ${g}`, (run) => run.cpu[g] ?? 0);
}
