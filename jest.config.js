// Runs every project's tests in one jest process tree (`npm test`).
const { readdirSync, existsSync } = require('node:fs');
const { join } = require('node:path');

const roots = ['apps', 'libs', 'libs/platform'];
const projects = [];
for (const root of roots) {
  for (const name of readdirSync(join(__dirname, root))) {
    const config = join(__dirname, root, name, 'jest.config.js');
    if (existsSync(config)) projects.push(config);
  }
}
// Global options (they do not apply per project): integration tests start databases and servers.
// workerIdleMemoryLimit: test files run in a worker process, replaced once a file leaves it holding
// more than 1 GB. Without it, jest on two cores runs every file inside its own process (maxWorkers 1
// means "in band"): the heap grew to ~4 GB over the run, every full collection walked all of it (the
// blob store's memory probe spent ~70 s in them), and a native crash in one file (an addon's abort)
// took the whole run down instead of failing that file.
module.exports = { projects, testTimeout: 30000, workerIdleMemoryLimit: '1GB' };
