import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { flatten, formatTable, summarise, type Figures } from './compare-figures';
import { REPO_ROOT } from '../support/processes';

/**
 * `npm run bench:compare -- <git-ref> <benchmark> [benchmark args]`: the same benchmark on another
 * commit (A, built in a git worktree under tmp/compare/) and on this working tree (B, built by the
 * npm script), alternately A B A B …, then every figure as the ratio B / A with its spread. This
 * machine's speed varies by 2.5× from day to day: only figures measured side by side in one run are
 * compared, never absolute numbers from different days.
 *
 * Environment: COMPARE_ROUNDS (default 3, at least 2); COMPARE_KEEP=1 keeps the other commit's
 * worktree (and its build) for the next comparison. Every benchmark writes tmp/bench/<name>.json in
 * the tree it ran from: that is what is read after each run.
 */
const root = REPO_ROOT;
const [ref, bench, ...rest] = process.argv.slice(2);
const args = rest[0] === '--' ? rest.slice(1) : rest;
const rounds = Math.max(2, Number(process.env['COMPARE_ROUNDS'] ?? 3));

function git(cwd: string, ...a: string[]): string {
  const r = spawnSync('git', a, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

function step(label: string, cwd: string, cmd: string, a: string[]): void {
  const started = Date.now();
  // The other commit's tree lives under tmp/compare/: its benchmarks would look for ../shared beside it.
  const benchData = process.env['BENCH_DATA'] ?? resolve(root, '..', 'shared', 'bench-data');
  const r = spawnSync(cmd, a, { cwd, stdio: 'inherit', env: { ...process.env, TZ: 'UTC', BENCH_DATA: benchData } });
  if (r.status !== 0) throw new Error(`${label} failed (exit ${r.status})`);
  console.log(`[compare] ${label}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** The other commit's tree: a detached worktree; this tree's node_modules when the lockfiles agree. */
function prepare(sha: string, dir: string): void {
  if (!existsSync(join(dir, '.git'))) {
    mkdirSync(dirname(dir), { recursive: true });
    git(root, 'worktree', 'add', '--detach', '--force', dir, sha);
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    const sameLock = spawnSync('git', ['diff', '--quiet', sha, '--', 'package-lock.json'], { cwd: root }).status === 0;
    if (sameLock) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    else
      step(`npm install in ${sha.slice(0, 12)} (its lockfile differs from this tree's)`, dir, 'npm', [
        'install',
        '--no-audit',
        '--no-fund',
      ]);
  }
  step(`build ${sha.slice(0, 12)}`, dir, process.execPath, [join(dir, 'tools', 'scripts', 'build.mjs')]);
}

function runOnce(tree: string, label: string, bench: string): Figures {
  const out = join(tree, 'tmp', 'bench', `${bench}.json`);
  rmSync(out, { force: true });
  step(`${label}: ${bench} ${args.join(' ')}`, tree, process.execPath, [join(tree, 'tools', 'bench', 'run.mjs'), bench, ...args]);
  if (!existsSync(out)) throw new Error(`${label}: the benchmark wrote no ${out}`);
  return flatten(JSON.parse(readFileSync(out, 'utf8')));
}

function removeWorktree(dir: string): void {
  const modules = join(dir, 'node_modules');
  // The link to this tree's node_modules goes first: nothing may follow it while the worktree is removed.
  if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) unlinkSync(modules);
  spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
}

function main(): void {
  if (!ref || !bench) {
    console.error('usage: npm run bench:compare -- <git-ref> <benchmark> [benchmark args]');
    process.exit(2);
  }
  const sha = git(root, 'rev-parse', '--verify', `${ref}^{commit}`);
  const head = git(root, 'rev-parse', 'HEAD');
  const dirty = git(root, 'status', '--porcelain', '--untracked-files=no') !== '';
  const other = join(root, 'tmp', 'compare', sha.slice(0, 12));
  const labelB = `${head.slice(0, 12)}${dirty ? '+changes' : ''}`;
  try {
    prepare(sha, other);
    const a: Figures[] = [];
    const b: Figures[] = [];
    for (let i = 1; i <= rounds; i++) {
      a.push(runOnce(other, `round ${i}/${rounds} A (${sha.slice(0, 12)})`, bench));
      b.push(runOnce(root, `round ${i}/${rounds} B (${labelB})`, bench));
    }
    const rows = summarise(a, b);
    console.log(
      `\n${bench} ${args.join(' ')}\nA = ${sha.slice(0, 12)} (${ref}), B = ${labelB}; ${rounds} rounds, A B A B …; B / A is the median of the rounds' ratios\n${formatTable(rows)}`,
    );
    const dir = join(root, 'tmp', 'bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `compare-${bench}.json`),
      JSON.stringify({ date: new Date().toISOString(), ref, a: sha, b: head, dirty, args, rounds, rows, runs: { a, b } }, null, 2),
    );
  } finally {
    if (process.env['COMPARE_KEEP'] !== '1' && existsSync(other)) removeWorktree(other);
  }
}

try {
  main();
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
