/*
 * The worker is started from this source rather than from a file so that it needs no build step:
 * compiled JavaScript is required directly. When the library runs from TypeScript sources (jest,
 * which cannot give PGlite the native dynamic `import()` it needs), TypeScript files are compiled
 * on the fly with @swc/core, a dev dependency; a loader inherited through execArgv (ts-node and
 * the like) takes precedence.
 */
export const WORKER_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
const { entry, swcCore } = workerData.bootstrap;
if (entry.endsWith('.ts') && !require.extensions['.ts']) {
  if (!swcCore) throw new Error('running the embedded database from .ts sources needs @swc/core');
  const { transformSync } = require(swcCore);
  const { readFileSync } = require('node:fs');
  require.extensions['.ts'] = (module, filename) => {
    const { code } = transformSync(readFileSync(filename, 'utf8'), {
      filename,
      swcrc: false,
      sourceMaps: 'inline',
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    module._compile(code, filename);
  };
}
require(entry).runHostWorker().catch((err) => { throw err; });
`;
