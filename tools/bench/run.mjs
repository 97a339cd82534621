// Runs a built benchmark: `npm run bench -- <name> [args]` (e.g. `npm run bench -- retrieval --dataset scifact`).
// Arguments after the name go to the benchmark; a `--` between them is dropped. Never part of `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'dist', 'apps', 'e2e', 'src', 'bench');
const available = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.bench.js'))
      .map((f) => f.replace('.bench.js', ''))
  : [];
const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(2);
}
const args = process.argv.slice(3);
if (args[0] === '--') args.shift();
const res = spawnSync(process.execPath, [join(dir, `${name}.bench.js`), ...args], { stdio: 'inherit', env: { ...process.env, TZ: 'UTC' } });
process.exit(res.status ?? 1);
