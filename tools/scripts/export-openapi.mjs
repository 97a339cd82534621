// Writes openapi.json from the built gateway (`npm run openapi` builds first).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
require('reflect-metadata');
const { generateOpenApiDocument, serializeOpenApi } = require(join(root, 'dist/libs/gateway/src/index.js'));
const doc = await generateOpenApiDocument();
writeFileSync(join(root, 'openapi.json'), serializeOpenApi(doc));
console.log(`openapi.json: ${Object.keys(doc.paths).length} paths`);
