// Verifies an exported activity log offline: `npm run activity:verify -- --kb <kbid> --type <event type> [--head <hash>] [--after <seq>:<hash>] <file.ndjson>`.
// The file is what `POST /api/v1/kb/{kbid}/activity/{type}/query` streams with `show` including event_id,
// details, chain_seq and chain_hash (docs/activity.md). Exits 1 when the chain is broken. Needs `npm run build`.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const { verifyExport } = require(join(root, 'dist', 'libs', 'reporting', 'src', 'chain', 'chain-export.js'));
const { values, positionals } = parseArgs({
  options: { kb: { type: 'string' }, type: { type: 'string' }, head: { type: 'string' }, after: { type: 'string' } },
  allowPositionals: true,
});
if (!values.kb || !values.type || positionals.length !== 1) {
  console.error('usage: npm run activity:verify -- --kb <kbid> --type <event type> [--head <hash>] [--after <seq>:<hash>] <file.ndjson>');
  process.exit(2);
}
const after = values.after ? { seq: Number(values.after.split(':')[0]), hash: values.after.split(':')[1] } : undefined;
const result = verifyExport(readFileSync(positionals[0], 'utf8').split('\n'), values.kb, values.type, { after, head: values.head });
console.log(JSON.stringify(result, null, 2));
process.exit(result.broken ? 1 : 0);
