import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startDistributed, startStandalone, type Topology } from '../support/topologies';

/**
 * Streams a large upload through the gateway and samples the serving process's resident memory.
 * Target: a 2 GiB upload raises the gateway's memory by no more than a few tens of MiB.
 * `BENCH_UPLOAD_MIB=2048 npm run bench -- upload-memory`
 */
const rssMib = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

function body(mib: number): Readable {
  const chunk = Buffer.alloc(1024 * 1024, 7);
  let sent = 0;
  return new Readable({
    read() {
      this.push(sent++ < mib ? chunk : null);
    },
  });
}

async function measure(topology: Topology, mib: number) {
  const pid = topology.edgePid();
  if (!pid) throw new Error('no pid');
  const boot = topology.bootstrap();
  const cred = apiKey(boot.api_key.token);
  const before = rssMib(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssMib(pid))), 50);
  const started = Date.now();
  const url = new URL(`${topology.http.baseUrl}/api/v1/kb/${boot.kb.id}/upload`);
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          [cred.header]: cred.value,
          'content-type': 'video/mp4',
          'x-filename': 'big.mp4',
          'content-length': String(mib * 1024 * 1024),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    body(mib).pipe(req);
  });
  clearInterval(timer);
  const seconds = (Date.now() - started) / 1000;
  return {
    topology: topology.name,
    upload_mib: mib,
    status,
    seconds: Math.round(seconds * 10) / 10,
    mib_per_s: Math.round(mib / seconds),
    rss_before_mib: Math.round(before),
    rss_peak_mib: Math.round(peak),
    rss_growth_mib: Math.round(peak - before),
  };
}

async function main(): Promise<void> {
  const mib = Number(process.env['BENCH_UPLOAD_MIB'] ?? 2048);
  const rows = [];
  for (const start of [() => startStandalone({ PROCESSING_WORKERS_ENABLED: 'false' }), () => startDistributed()]) {
    const topology = await start();
    try {
      rows.push(await measure(topology, mib));
    } finally {
      await topology.stop();
    }
  }
  console.table(rows);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'upload-memory.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
