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
module.exports = { projects, testTimeout: 30000 };
