// Builds one KB's search index in memory (docs/decisions/0014) from a kept benchmark data dir and
// reports its size and build time:
//   npm run build && node --expose-gc tools/bench/search-memory-size.cjs <data dir>   (the service must not be running on it)
require('reflect-metadata');
const { join, resolve } = require('node:path');
const dist = join(__dirname, '..', '..', 'dist', 'libs');
const { createServiceDataSource, closeServiceDataSource } = require(join(dist, 'platform/database/src/index.js'));
const { CONTENT_ENTITIES, CONTENT_MIGRATIONS } = require(join(dist, 'content/src/index.js'));
const { SearchMemoryService } = require(join(dist, 'content/src/search/memory/search-memory.service.js'));

const dir = resolve(process.argv[2] ?? '');
const { kbid } = require(join(dir, 'bench-retrieval.json'));
const mb = (x) => (x / 1048576).toFixed(1);
const usage = () => {
  global.gc?.();
  global.gc?.();
  return process.memoryUsage();
};
(async () => {
  const ds = await createServiceDataSource({
    service: 'content',
    schema: 'content',
    dataDir: join(dir, 'pg'),
    entities: CONTENT_ENTITIES,
    migrations: CONTENT_MIGRATIONS,
    runMigrations: false,
  });
  const logger = {
    info() {},
    warn: console.warn,
    error: console.error,
    debug() {},
    child() {
      return this;
    },
  };
  const memory = new SearchMemoryService(ds, { outboxSweepMs: 0, consumeProcessingResults: false }, logger);
  await ds.query('SELECT 1');
  const before = usage();
  const started = Date.now();
  const idx = await memory.build(kbid);
  const ms = Date.now() - started;
  const after = usage();
  if (!idx) throw new Error('the index was not built (above the limits, or written meanwhile)');
  const postings = [...idx.data.postings.values()].reduce((n, p) => n + p.ords.length, 0);
  console.log(
    JSON.stringify({
      build_ms: ms,
      paragraphs: idx.size,
      terms: idx.data.postings.size,
      postings,
      accounted_mb: mb(idx.bytes),
      heap_used_mb: mb(after.heapUsed - before.heapUsed),
      external_mb: mb(after.external - before.external),
      array_buffers_mb: mb(after.arrayBuffers - before.arrayBuffers),
      rss_mb: mb(after.rss - before.rss),
    }),
  );
  await closeServiceDataSource(ds);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
