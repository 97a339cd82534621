import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../support/processes';
import { readQueries } from './ir-metrics';
import { cliArgs, datasetFiles, numberArg, openBenchKb, reusedDataset, type BenchKb } from './retrieval.bench';

/**
 * Sustained load on `/find` (POST, hybrid by default) and `/catalog` (GET ?query=) with the data
 * set's queries in rotation, on a KB ingested by the retrieval benchmark; each endpoint with one
 * connection (latency of a request alone) and then with `--connections` (throughput):
 *
 *   npm run bench -- retrieval --dataset scifact --keep          # ingest once, prints the data dir
 *   npm run bench -- find-load --reuse <dir> [--seconds 30] [--connections 16] [--top-k 20] [--features keyword,semantic]
 *   npm run bench -- find-load --dataset scifact --limit-docs 500  # or ingest a small corpus here
 */
interface Row {
  endpoint: string;
  connections: number;
  seconds: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
}

type Target = { endpoint: string; request: (query: string) => autocannon.Request };

/** One request first: a missing endpoint is reported as such instead of as thousands of 404s. */
async function probe(kb: BenchKb, target: Target, query: string): Promise<string | undefined> {
  const req = target.request(query);
  const res = await fetch(`${kb.http.baseUrl}${req.path ?? ''}`, {
    method: req.method,
    headers: req.headers as Record<string, string>,
    body: req.body as string | undefined,
  });
  const text = await res.text();
  if (res.status === 404) return `${target.endpoint} answers 404 (${text.slice(0, 160)}): not in this build yet`;
  if (res.status >= 300) return `${target.endpoint} answers HTTP ${res.status}: ${text.slice(0, 300)}`;
  return undefined;
}

async function load(kb: BenchKb, target: Target, queries: string[], connections: number, seconds: number): Promise<Row> {
  let next = 0;
  // Each request takes the next query, so the connections walk the whole query set between them.
  const requests = [{ setupRequest: (req: autocannon.Request) => ({ ...req, ...target.request(queries[next++ % queries.length] ?? '') }) }];
  const options = { url: kb.http.baseUrl, connections, requests };
  await autocannon({ ...options, duration: Math.min(5, seconds) }); // warm-up: JIT, model, caches, pools
  const r = await autocannon({ ...options, duration: seconds });
  return {
    endpoint: target.endpoint,
    connections,
    seconds,
    requests_per_s: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    requests: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors,
  };
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      dataset: { type: 'string' },
      split: { type: 'string' },
      reuse: { type: 'string' },
      'limit-docs': { type: 'string' },
      keep: { type: 'boolean', default: false },
      seconds: { type: 'string', default: '15' },
      connections: { type: 'string', default: '16' },
      'top-k': { type: 'string', default: '20' },
      features: { type: 'string', default: 'keyword,semantic' },
      'doc-mode': { type: 'string', default: 'title-in-body' },
      'wait-timeout': { type: 'string', default: '7200' },
    },
  });
  const dataset = a.dataset ?? (a.reuse ? reusedDataset(a.reuse) : 'scifact');
  if (!a.reuse && !a['limit-docs']) console.warn('note: no --reuse and no --limit-docs: ingesting the whole corpus first');
  const docMode = a['doc-mode'] === 'separate' ? 'separate' : 'title-in-body';
  const queries = readQueries(datasetFiles(dataset, a.split).queries).map((q) => q.text);
  const seconds = numberArg('seconds', a.seconds) ?? 15;
  const connections = numberArg('connections', a.connections) ?? 16;

  const kb = await openBenchKb({
    dataset,
    limitDocs: numberArg('limit-docs', a['limit-docs']),
    reuse: a.reuse,
    keep: a.keep,
    docMode,
    concurrency: 8,
    waitTimeoutS: numberArg('wait-timeout', a['wait-timeout']) ?? 7200,
  });
  const headers = { [kb.credential.header]: kb.credential.value, 'content-type': 'application/json' };
  const findBody = { top_k: numberArg('top-k', a['top-k']) ?? 20, features: a.features.split(',').map((f) => f.trim()) };
  const targets: Target[] = [
    {
      endpoint: `POST /find ${findBody.features.join('+')} top_k=${findBody.top_k}`,
      request: (query) => ({ method: 'POST', path: `/api/v1/kb/${kb.kbid}/find`, headers, body: JSON.stringify({ ...findBody, query }) }),
    },
    {
      endpoint: 'GET /catalog ?query=',
      request: (query) => ({
        method: 'GET',
        path: `/api/v1/kb/${kb.kbid}/catalog?query=${encodeURIComponent(query)}`,
        headers: { [kb.credential.header]: kb.credential.value },
      }),
    },
  ];
  const rows: Row[] = [];
  const skipped: string[] = [];
  try {
    console.log(
      `${dataset}: ${kb.manifest.ingestion.docs} docs, ${queries.length} queries in rotation, ${connections} connections, ${seconds} s per endpoint`,
    );
    for (const target of targets) {
      const problem = await probe(kb, target, queries[0] ?? '');
      if (problem) skipped.push(problem);
      else {
        // One connection shows the latency of a request alone; `connections` shows throughput.
        rows.push(await load(kb, target, queries, 1, seconds));
        if (connections > 1) rows.push(await load(kb, target, queries, connections, seconds));
      }
    }
  } finally {
    await kb.close();
  }
  if (rows.length) console.table(rows);
  for (const s of skipped) console.error(`skipped: ${s}`);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'find-load.json'),
    JSON.stringify({ date: new Date().toISOString(), dataset, docs: kb.manifest.ingestion.docs, rows, skipped }, null, 2),
  );
  if (skipped.length) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
