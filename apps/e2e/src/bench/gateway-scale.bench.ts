import autocannon from 'autocannon';
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { cpuPerRequest, sampleCpu } from './process-cpu';
import { startDistributed, type Deployment } from '../support/topologies';

/**
 * The gateway's sustained request rate with 1 and 2 gateway processes in front of the same services
 * (issue 22): `npm run bench -- gateway-scale --gateways 1,2 --connections 16 --seconds 20 --rounds 2`.
 *
 * One distributed deployment with as many gateway processes as the largest count asked for; accounts,
 * content, understanding, reporting, NATS and the databases are the same processes for every row. A row
 * with N gateways drives the first N of them at once with one autocannon instance each (the connections
 * split evenly, all started together, requests summed); the other gateways stay idle. No proxy sits in
 * the measured path. Counts alternate within a round and reverse every other round (1,2 then 2,1) so the
 * machine's drift falls on both. Prints a table, writes JSON to tmp/bench/gateway-scale.json.
 */
interface Row {
  round: number;
  gateways: number;
  connections: number;
  seconds: number;
  requests_per_s: number;
  /** Per autocannon instance (one per gateway), `a / b`: percentiles of separate runs do not add up. */
  p50_ms: string;
  p99_ms: string;
  non_2xx: number;
  errors: number;
  load_1m: string;
  /** CPU microseconds per request by process role; `gateway` sums every gateway process, `bench` is the load generator. */
  [cpu: `cpu_us_${string}`]: number;
}

/** Creates one resource and waits until it is processed, so processing does not share the window. */
async function prepare(deployment: Deployment): Promise<{ path: string; headers: Record<string, string> }> {
  const boot = deployment.bootstrap();
  const kbid = boot.kb.id;
  const cred = apiKey(boot.api_key.token);
  if (!cred) throw new Error('no credential');
  const created = await deployment.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
    credential: cred,
    body: { title: 'Benchmark resource', slug: `bench-${Date.now()}`, texts: { body: { body: 'Some text to read back.' } } },
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status}`);
  const path = `/api/v1/kb/${kbid}/resource/${created.body.uuid}`;
  for (let waited = 0; ; waited += 250) {
    const got = await deployment.http.call<{ metadata?: { status?: string } }>('GET', path, { credential: cred });
    if (got.body.metadata?.status === 'PROCESSED') break;
    if (waited > 120_000) throw new Error(`resource not processed after 120 s (status ${String(got.body.metadata?.status)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { path, headers: { [cred.header]: cred.value } };
}

/** Splits `total` connections over `n` instances as evenly as possible (16 over 2: 8 and 8). */
function splitConnections(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

async function drive(urls: string[], headers: Record<string, string>, connections: number, seconds: number) {
  const shares = splitConnections(connections, urls.length);
  return Promise.all(urls.map((url, i) => autocannon({ url, headers, connections: shares[i] as number, duration: seconds })));
}

async function measure(
  deployment: Deployment,
  target: { path: string; headers: Record<string, string> },
  gateways: number,
  opts: { round: number; connections: number; seconds: number },
): Promise<Row> {
  const urls = deployment
    .gatewayUrls()
    .slice(0, gateways)
    .map((base) => `${base}${target.path}`);
  await drive(urls, target.headers, opts.connections, 3); // warm-up: JIT, caches, pools
  const loadBefore = loadavg()[0] as number;
  const before = sampleCpu(deployment.database);
  const benchBefore = process.cpuUsage();
  const results = await drive(urls, target.headers, opts.connections, opts.seconds);
  const bench = process.cpuUsage(benchBefore);
  const total = results.reduce((sum, r) => sum + r.requests.total, 0);
  const cpu = cpuPerRequest(before, sampleCpu(deployment.database), total);
  const benchUs = Math.round((bench.user + bench.system) / Math.max(1, total));
  return {
    round: opts.round,
    gateways,
    connections: opts.connections,
    seconds: opts.seconds,
    requests_per_s: Math.round(results.reduce((sum, r) => sum + r.requests.average, 0)),
    p50_ms: results.map((r) => r.latency.p50).join(' / '),
    p99_ms: results.map((r) => r.latency.p99).join(' / '),
    non_2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    load_1m: `${loadBefore.toFixed(1)}→${(loadavg()[0] as number).toFixed(1)}`,
    ...cpu,
    cpu_us_bench: benchUs,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      gateways: { type: 'string', default: '1,2' },
      connections: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const counts = values.gateways.split(',').map(Number);
  const connections = Number(values.connections);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const bad = (n: number, max: number) => !Number.isInteger(n) || n < 1 || n > max;
  if (counts.length === 0 || counts.some((n) => bad(n, 8))) throw new Error('--gateways: comma-separated counts, 1–8');
  if (bad(connections, 1024) || bad(seconds, 600) || bad(rounds, 20))
    throw new Error('--connections, --seconds, --rounds: positive integers');
  if (counts.some((n) => n > connections)) throw new Error('--connections must be at least the largest gateway count');

  const deployment = await startDistributed({}, { gateway: Math.max(...counts) });
  const rows: Row[] = [];
  try {
    const target = await prepare(deployment);
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? counts : [...counts].reverse();
      for (const gateways of order) {
        const row = await measure(deployment, target, gateways, { round, connections, seconds });
        console.log(JSON.stringify(row));
        rows.push(row);
      }
    }
  } finally {
    await deployment.stop();
  }
  console.table(rows);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'gateway-scale.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
