// Writes k8s/base/nats/nats-server.conf from the bus access table (libs/contracts/src/bus-access.ts),
// from the built libraries (`npm run nats-config` builds first). A spec checks the committed file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
require('reflect-metadata');
const { natsServerConfig } = require(join(root, 'dist/libs/platform/messaging/src/index.js'));
const file = join(root, 'k8s', 'base', 'nats', 'nats-server.conf');
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, natsServerConfig({ listen: '0.0.0.0:4222', storeDir: '/data' }));
console.log(`${file} written`);
