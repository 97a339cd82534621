import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startStandalone } from '../support/topologies';

/**
 * Create-resource throughput (a title and a ~1 KB text field) on the standalone process, with the
 * processing workers off (the write path alone) and on (writes competing with processing).
 * `npm run bench -- create-resource`
 */
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(22);

async function run(workers: boolean, connections: number, seconds: number) {
  const topology = await startStandalone({ PROCESSING_WORKERS_ENABLED: String(workers) });
  try {
    const boot = topology.bootstrap();
    const cred = apiKey(boot.api_key.token);
    const url = `${topology.http.baseUrl}/api/v1/kb/${boot.kb.id}/resources`;
    const options = {
      url,
      method: 'POST' as const,
      connections,
      headers: { [cred.header]: cred.value, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Benchmark resource', texts: { body: { body: TEXT, format: 'PLAIN' } } }),
    };
    await autocannon({ ...options, duration: 3 });
    const r = await autocannon({ ...options, duration: seconds });
    return {
      processing_workers: workers ? 'on' : 'off',
      connections,
      resources_per_s: Math.round(r.requests.average),
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      non_2xx: r.non2xx,
    };
  } finally {
    await topology.stop();
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.env['BENCH_SECONDS'] ?? 10);
  const rows = [await run(false, 8, seconds), await run(true, 8, seconds)];
  console.table(rows);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'create-resource.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
