// Shared jest settings for every project. SWC compiles TypeScript with decorator metadata
// (NestJS dependency injection needs it) and resolves the workspace path aliases.
const path = require('node:path');
const fs = require('node:fs');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.$schema;
swcrc.jsc.baseUrl = __dirname;

const moduleNameMapper = {};
for (const [alias, targets] of Object.entries(swcrc.jsc.paths)) {
  moduleNameMapper[`^${alias.replace(/[/.]/g, (c) => '\\' + c)}$`] = path.join(__dirname, targets[0]);
}

module.exports = {
  testEnvironment: path.join(__dirname, 'libs/platform/testing/src/jest-environment.js'),
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }],
    // ESM-only packages (jose) are compiled to CommonJS for jest; the app itself loads them natively.
    '^.+/node_modules/(jose)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' }, swcrc: false }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(jose)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  setupFiles: [path.join(__dirname, 'libs/platform/testing/src/jest-setup.js')],
  testTimeout: 30000,
};
