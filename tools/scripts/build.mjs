// Compiles every app and lib to dist/ with SWC (decorator metadata on, workspace aliases rewritten
// to relative paths). Type checking is separate: `npm run typecheck`.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', '@swc', 'cli', 'bin', 'swc.js'),
    'apps',
    'libs',
    '-d',
    'dist',
    '--config-file',
    '.swcrc',
    '--quiet',
    '--ignore',
    '**/*.spec.ts,**/*.int-spec.ts,**/*.e2e-spec.ts,**/test/**,**/*.js',
  ],
  { cwd: root, stdio: 'inherit' },
);
