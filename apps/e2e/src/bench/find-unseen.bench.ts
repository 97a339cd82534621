import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../support/processes';
import { readQueries } from './ir-metrics';
import { cliArgs, datasetDir, numberArg, openBenchKb, reusedDataset, type BenchKb } from './retrieval.bench';

/**
 * Latency of a `/find` whose query nobody asked before (issue 21): the query embedding is never in
 * the understanding service's cache, which the rotating queries of find-load fill after one pass.
 * Sequential requests, one at a time, each with a query text used once in the run: hybrid
 * (keyword + semantic) and keyword-only alternate request by request (so both meet the same moments
 * of a shared machine), on disjoint halves of the data set's queries (every split's queries
 * together). A few queries of their own warm the service up first (JIT, the model's workers).
 *
 *   npm run bench -- find-unseen --reuse <dir> [--queries 300] [--top-k 20] [--warmup 30]
 *   npm run bench -- find-unseen --dataset scifact --limit-docs 1500 --keep   # or ingest here
 */
interface Row {
  endpoint: string;
  requests: number;
  p50_ms: number;
  p95_ms: number;
  mean_ms: number;
  non_2xx: number;
}

/** Every query text of the data set once (all splits; repeated texts dropped), in file order. */
function unseenQueries(dataset: string): string[] {
  const dir = datasetDir(dataset);
  const files = ['queries.jsonl', 'queries.dev.jsonl', 'queries.train.jsonl', 'queries.test.jsonl'].map((f) => join(dir, f));
  const texts = files.filter((f) => existsSync(f)).flatMap((f) => readQueries(f).map((q) => q.text.trim()));
  return [...new Set(texts.filter((t) => t !== ''))];
}

/** The q-quantile of sorted values (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

function summarise(endpoint: string, ms: number[], non2xx: number): Row {
  const sorted = [...ms].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    endpoint,
    requests: ms.length,
    p50_ms: round(quantile(sorted, 0.5)),
    p95_ms: round(quantile(sorted, 0.95)),
    mean_ms: round(ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length)),
    non_2xx: non2xx,
  };
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      dataset: { type: 'string' },
      reuse: { type: 'string' },
      'limit-docs': { type: 'string' },
      keep: { type: 'boolean', default: false },
      queries: { type: 'string', default: '300' },
      warmup: { type: 'string', default: '30' },
      'top-k': { type: 'string', default: '20' },
      'doc-mode': { type: 'string', default: 'title-in-body' },
      'wait-timeout': { type: 'string', default: '7200' },
    },
  });
  const dataset = a.dataset ?? (a.reuse ? reusedDataset(a.reuse) : 'scifact');
  if (!a.reuse && !a['limit-docs']) console.warn('note: no --reuse and no --limit-docs: ingesting the whole corpus first');
  const all = unseenQueries(dataset);
  const warmup = numberArg('warmup', a.warmup, 0) ?? 30;
  // Each measured pair takes two fresh texts (one hybrid, one keyword-only).
  const pairs = Math.min(numberArg('queries', a.queries) ?? 300, Math.floor((all.length - warmup) / 2));
  if (pairs < 1) throw new Error(`${dataset} has ${all.length} distinct queries: too few for --warmup ${warmup}`);
  const topK = numberArg('top-k', a['top-k']) ?? 20;

  const kb: BenchKb = await openBenchKb({
    dataset,
    limitDocs: numberArg('limit-docs', a['limit-docs']),
    reuse: a.reuse,
    keep: a.keep,
    docMode: a['doc-mode'] === 'separate' ? 'separate' : 'title-in-body',
    concurrency: 8,
    waitTimeoutS: numberArg('wait-timeout', a['wait-timeout']) ?? 7200,
  });
  const url = `${kb.http.baseUrl}/api/v1/kb/${kb.kbid}/find`;
  const headers = { [kb.credential.header]: kb.credential.value, 'content-type': 'application/json' };
  const find = async (query: string, features: string[]): Promise<{ ms: number; ok: boolean }> => {
    const started = performance.now();
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, top_k: topK, features }) });
    await res.arrayBuffer();
    return { ms: performance.now() - started, ok: res.status < 300 };
  };
  const hybrid = ['keyword', 'semantic'];
  const keyword = ['keyword'];
  const rows: Row[] = [];
  try {
    console.log(
      `${dataset}: ${kb.manifest.ingestion.docs} docs, ${all.length} distinct queries; ${warmup} to warm up, ${pairs} hybrid + ${pairs} keyword-only, each new`,
    );
    // The first /find loads the model and reads the KB into memory: on a busy machine it can outlast
    // the gateway's deadline (504), so it is asked again a few times before the run gives up.
    for (let attempt = 1; ; attempt++) {
      const probe = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query: all[0], top_k: topK, features: hybrid }) });
      const text = await probe.text();
      if (probe.status < 300) break;
      if (probe.status !== 504 || attempt >= 5) throw new Error(`POST /find answers HTTP ${probe.status}: ${text.slice(0, 300)}`);
    }
    for (const [i, q] of all.slice(1, warmup).entries()) await find(q, i % 2 ? keyword : hybrid);
    const times = { hybrid: [] as number[], keyword: [] as number[] };
    const failed = { hybrid: 0, keyword: 0 };
    for (let i = 0; i < pairs; i++) {
      const h = await find(all[warmup + 2 * i] as string, hybrid);
      times.hybrid.push(h.ms);
      if (!h.ok) failed.hybrid++;
      const k = await find(all[warmup + 2 * i + 1] as string, keyword);
      times.keyword.push(k.ms);
      if (!k.ok) failed.keyword++;
    }
    rows.push(summarise(`POST /find keyword+semantic top_k=${topK}, unseen queries`, times.hybrid, failed.hybrid));
    rows.push(summarise(`POST /find keyword top_k=${topK}, unseen queries`, times.keyword, failed.keyword));
  } finally {
    await kb.close();
  }
  console.table(rows);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'find-unseen.json'),
    JSON.stringify({ date: new Date().toISOString(), dataset, docs: kb.manifest.ingestion.docs, rows }, null, 2),
  );
  if (rows.some((r) => r.non_2xx > 0)) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
