// `npm test`: type check, lint, build (the e2e journeys run the built apps), then every jest project.
// Prints one closing line `N passed, N failed` for CI.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', TZ: 'UTC' };
const run = (label, cmd, args) => {
  const started = Date.now();
  const res = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  console.log(`[${label}] ${res.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return res.status === 0;
};
const bin = (name) => join(root, 'node_modules', '.bin', name);

if (!run('typecheck', bin('tsc'), ['-p', 'tsconfig.json'])) process.exit(1);
if (!run('lint', 'npm', ['run', '--silent', 'lint'])) process.exit(1);
if (!run('build', process.execPath, [join(root, 'tools', 'scripts', 'build.mjs')])) process.exit(1);

const report = join(root, 'tmp', 'jest-results.json');
mkdirSync(dirname(report), { recursive: true });
rmSync(report, { force: true });
const jestArgs = ['--ci', '--json', `--outputFile=${report}`, ...process.argv.slice(2)];

/**
 * Jest runs in its own process group. Once it has written its results it gets EXIT_GRACE_MS to
 * exit; a process a test left running (a service child that outlived a failed start) would
 * otherwise keep it alive until CI's own time limit. Then the whole group is stopped, leftovers
 * included, and the outcome is read from the results.
 */
const EXIT_GRACE_MS = 30_000;
const runJest = () =>
  new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(bin('jest'), jestArgs, { cwd: root, env, stdio: 'inherit', detached: true });
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => killGroup(signal));
    let reportSeenAt;
    const watch = setInterval(() => {
      if (reportSeenAt === undefined && existsSync(report)) reportSeenAt = Date.now();
      if (reportSeenAt !== undefined && Date.now() - reportSeenAt > EXIT_GRACE_MS) {
        console.log(`[jest] wrote its results but had not exited ${EXIT_GRACE_MS / 1000} s later: stopping it and what it left running`);
        killGroup('SIGKILL');
        clearInterval(watch);
      }
    }, 1_000);
    child.on('exit', (code, signal) => {
      clearInterval(watch);
      // Whatever a test started and did not stop goes with it.
      killGroup('SIGKILL');
      console.log(
        `[jest] ${code === 0 ? 'ok' : code === null ? `stopped (${signal})` : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      resolve(code);
    });
  });

const code = await runJest();
let ok = code === 0;
try {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = results.numPendingTests + results.numTodoTests;
  console.log(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
  // Stopped after writing its results (code null): those results decide.
  if (code === null) ok = results.success === true && results.numFailedTests === 0 && results.numFailedTestSuites === 0;
} catch {
  console.log('\n0 passed, 1 failed');
  ok = false;
}
process.exit(ok ? 0 : 1);
