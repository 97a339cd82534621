// `npm test`: type check, lint, build (the e2e journeys run the built apps), then every jest project.
// Prints one closing line `N passed, N failed` for CI.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
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
const ok = run('jest', bin('jest'), jestArgs);
try {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = results.numPendingTests + results.numTodoTests;
  console.log(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
} catch {
  console.log('\n0 passed, 1 failed');
}
process.exit(ok ? 0 : 1);
