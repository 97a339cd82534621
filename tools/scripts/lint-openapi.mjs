// Lints openapi.json with Redocly's recommended rules (`npm run openapi:lint`). Prints one line per
// problem and exits 1 when there is an error; `--json` prints the problems as one JSON array instead
// (the gateway's document spec reads it) and `--document <file>` lints another document.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: { json: { type: 'boolean', default: false }, document: { type: 'string', default: join(root, 'openapi.json') } },
});
const path = resolve(values.document);

// The recommended ruleset as it is: nothing is turned off (its warnings are listed and accepted,
// rule by rule, in libs/gateway/src/openapi-document.spec.ts).
const config = await createConfig({ extends: ['recommended'] });
const document = makeDocumentFromString(readFileSync(path, 'utf8'), path);
const found = await lintDocument({ document, config, externalRefResolver: new BaseResolver() });
const problems = found.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location[0]?.pointer ?? '' }));

if (values.json) {
  process.stdout.write(JSON.stringify(problems));
} else {
  for (const p of problems) console.log(`${p.severity} ${p.ruleId} ${p.pointer}: ${p.message}`);
  console.log(
    `${problems.filter((p) => p.severity === 'error').length} errors, ${problems.filter((p) => p.severity === 'warn').length} warnings`,
  );
  process.exitCode = problems.some((p) => p.severity === 'error') ? 1 : 0;
}
