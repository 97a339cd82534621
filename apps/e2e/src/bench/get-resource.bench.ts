import autocannon from 'autocannon';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { cpuPerRequest, sampleCpu } from './process-cpu';
import { startDistributed, startStandalone, type Topology } from '../support/topologies';

/**
 * GET resource through the gateway, sustained load: standalone, then the distributed topology.
 * Run with `npm run bench -- get-resource` (builds first). Prints a table, writes JSON to tmp/bench/.
 */
interface Row {
  topology: string;
  connections: number;
  seconds: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  /** CPU microseconds per request by process role (`cpu_us_gateway`, `cpu_us_content`, `cpu_us_postgres`, …). */
  [cpu: `cpu_us_${string}`]: number;
}

async function measure(topology: Topology, connections: number, seconds: number): Promise<Row> {
  const boot = topology.bootstrap();
  const kbid = boot.kb.id;
  const cred = apiKey(boot.api_key.token);
  const created = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
    credential: cred,
    body: { title: 'Benchmark resource', slug: `bench-${Date.now()}`, texts: { body: { body: 'Some text to read back.' } } },
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status}`);
  const path = `/api/v1/kb/${kbid}/resource/${created.body.uuid}`;
  const url = `${topology.http.baseUrl}${path}`;
  if (!cred) throw new Error('no credential');
  // Processing the resource (the first one also loads the model) would share the window: wait it out.
  for (let waited = 0; ; waited += 250) {
    const got = await topology.http.call<{ metadata?: { status?: string } }>('GET', path, { credential: cred });
    if (got.body.metadata?.status === 'PROCESSED') break;
    if (waited > 120_000) throw new Error(`resource not processed after 120 s (status ${String(got.body.metadata?.status)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const headers = { [cred.header]: cred.value };
  await autocannon({ url, headers, connections, duration: 3 }); // warm-up: JIT, caches, pools
  const before = sampleCpu(topology.database);
  const result = await autocannon({ url, headers, connections, duration: seconds });
  const cpu = cpuPerRequest(before, sampleCpu(topology.database), result.requests.total);
  return {
    topology: topology.name,
    connections,
    seconds,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors,
    ...cpu,
  };
}

async function main(): Promise<void> {
  const connections = Number(process.env['BENCH_CONNECTIONS'] ?? 16);
  const seconds = Number(process.env['BENCH_SECONDS'] ?? 15);
  const rows: Row[] = [];
  for (const start of [startStandalone, startDistributed]) {
    const topology = await start();
    try {
      rows.push(await measure(topology, connections, seconds));
    } finally {
      await topology.stop();
    }
  }
  console.table(rows);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'get-resource.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
