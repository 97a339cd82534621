// What the extraction sandbox (worker processes, docs/security/parsers.md) adds to one small file:
// a DOCX parsed in this process, then through the pooled sandbox, then with a fresh worker per job.
//   npm run build && node tools/bench/sandbox-hop.cjs [iterations]
const { join } = require('node:path');
const dist = join(__dirname, '..', '..', 'dist', 'libs');
const { buildSimpleDocx } = require(join(dist, 'platform/testing/src/bombs.js'));
const { extractDocx } = require(join(dist, 'understanding/src/pipeline/extractors/office.extractor.js'));
const { extractFile } = require(join(dist, 'understanding/src/pipeline/extractors/extract-file.js'));
const { ExtractionSandbox, closeExtractionSandbox } = require(
  join(dist, 'understanding/src/pipeline/extractors/sandbox/extraction-sandbox.js'),
);
const { DEFAULT_SANDBOX_LIMITS } = require(join(dist, 'understanding/src/pipeline/extractors/sandbox/sandbox-limits.js'));

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const docx = buildSimpleDocx('Quarterly report: revenue grew by twelve per cent. '.repeat(40));
const n = Number(process.argv[2] ?? 300);
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6;

async function main() {
  for (let i = 0; i < 30; i++) await extractDocx(docx);
  let t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await extractDocx(docx);
  const inProcess = since(t) / n;
  t = process.hrtime.bigint();
  await extractFile(docx);
  const firstMs = since(t);
  for (let i = 0; i < 30; i++) await extractFile(docx);
  t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await extractFile(docx);
  const pooled = since(t) / n;
  const fresh = 10;
  t = process.hrtime.bigint();
  for (let i = 0; i < fresh; i++) {
    const pool = new ExtractionSandbox({ ...DEFAULT_SANDBOX_LIMITS, workers: 1 });
    await pool.run({ kind: 'file', type: DOCX, data: docx, zip: DEFAULT_SANDBOX_LIMITS.zip });
    await pool.close();
  }
  const perJob = since(t) / fresh;
  await closeExtractionSandbox();
  console.table([
    {
      docx_bytes: docx.length,
      in_process_ms: inProcess.toFixed(2),
      pooled_ms: pooled.toFixed(2),
      hop_ms: (pooled - inProcess).toFixed(2),
      first_parse_ms: firstMs.toFixed(0),
      worker_per_job_ms: perJob.toFixed(0),
    },
  ]);
}

void main();
