import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { apiKey, bearer, HttpClient, type Credential } from '../support/http-client';
import { REPO_ROOT, ServiceProcess, distMain, freePort } from '../support/processes';
import type { BootstrapFile } from '../support/topologies';
import { evaluate, percentile, readCorpus, readQrels, readQueries, type BeirDoc, type BeirQuery, type Qrels } from './ir-metrics';

/**
 * Retrieval quality and latency of `/find` on a BEIR data set, through the public HTTP API of the
 * standalone service: ingest the corpus (one resource per document), wait until every resource is
 * PROCESSED, run every judged query per configuration, print nDCG@10, Recall@100 and latencies.
 *
 *   npm run bench -- retrieval --dataset scifact --split dev [--limit-docs 500] [--keep | --reuse <dir>]
 *     [--features keyword,semantic,keyword+semantic] [--fusion default,rrf,rrf:k=60:keyword=1:semantic=0.5:window=200]
 *     [--doc-mode title-in-body|separate] [--top-k 100] [--reranker noop] [--min-semantic 0.3] [--min-bm25 0]
 *
 * Data sets come from `../shared/bench-data/<name>` next to the repository (or $BENCH_DATA/<name>).
 * Environment variables reach the service unchanged (e.g. PROCESSING_CONCURRENCY=4).
 */

export type DocMode = 'title-in-body' | 'separate';
const MANIFEST = 'bench-retrieval.json';
const RESOURCE_SLUG = /^[a-zA-Z0-9:_-]+$/; // CreateResourceDto's slug rule

export interface DatasetFiles {
  name: string;
  corpus: string;
  queries: string;
  qrels: string;
  split: string;
}

/** The folder of a data set: `$BENCH_DATA/<name>` or `../shared/bench-data/<name>`; a name with a `/` is a path. */
export function datasetDir(dataset: string): string {
  const base = process.env['BENCH_DATA'] ?? resolve(REPO_ROOT, '..', 'shared', 'bench-data');
  const dir = dataset.includes('/') ? resolve(dataset) : join(base, dataset);
  if (!existsSync(join(dir, 'corpus.jsonl')))
    throw new Error(`${join(dir, 'corpus.jsonl')} not found (data sets are read from ${base}; set BENCH_DATA to move it)`);
  return dir;
}

/** `--split dev` → `queries.dev.jsonl` + `qrels.dev.tsv`; no split → `queries.jsonl` + `qrels.tsv`, else the dev split. */
export function datasetFiles(dataset: string, split: string | undefined): DatasetFiles {
  const dir = datasetDir(dataset);
  const pair = (s: string) =>
    s
      ? { queries: join(dir, `queries.${s}.jsonl`), qrels: join(dir, `qrels.${s}.tsv`), split: s }
      : { queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels.tsv'), split: '' };
  let files = pair(split ?? '');
  if (split === undefined && !existsSync(files.queries)) files = pair('dev');
  for (const path of [files.queries, files.qrels]) if (!existsSync(path)) throw new Error(`${path} not found`);
  return { name: dataset, corpus: join(dir, 'corpus.jsonl'), ...files };
}

/** The data set a kept data dir holds, for `--reuse` without `--dataset`. */
export function reusedDataset(dir: string): string {
  const path = join(resolve(dir), MANIFEST);
  if (!existsSync(path)) throw new Error(`${resolve(dir)} has no ${MANIFEST}: not a data dir left by --keep`);
  return (JSON.parse(readFileSync(path, 'utf8')) as Manifest).dataset;
}

/** A slug per BEIR id: the id itself when the slug rule allows it, else a cleaned id plus a short hash. */
export function slugsFor(docs: readonly BeirDoc[]): Map<string, string> {
  const slugs = new Map<string, string>();
  const taken = new Set<string>();
  for (const { _id } of docs) {
    let slug =
      _id.length <= 200 && RESOURCE_SLUG.test(_id)
        ? _id
        : `${_id.replace(/[^a-zA-Z0-9:_-]/g, '_').slice(0, 180)}-${createHash('sha1').update(_id).digest('hex').slice(0, 10)}`;
    for (let n = 2; taken.has(slug); n++) slug = `${slug}-${n}`;
    taken.add(slug);
    slugs.set(slug, _id);
  }
  return slugs;
}

/** The create body for one document; `null` when it has no text at all. */
function resourceBody(doc: BeirDoc, slug: string, mode: DocMode): Record<string, unknown> | null {
  const title = doc.title.trim();
  const text = doc.text.trim();
  // BEIR scores `title + " " + text` as one document; `separate` keeps the title as the resource title.
  const body = mode === 'title-in-body' ? [title, text].filter(Boolean).join(' ') : text;
  if (!body && !title) return null;
  return {
    slug,
    ...(mode === 'separate' && title ? { title } : {}),
    ...(body ? { texts: { body: { body, format: 'PLAIN' } } } : {}),
  };
}

interface Manifest {
  dataset: string;
  doc_mode: DocMode;
  limit_docs: number | null;
  kbid: string;
  api_key: string;
  /** slug → BEIR _id of every ingested document. */
  slugs: Record<string, string>;
  ingestion: { docs: number; create_s: number; processed_s: number; errors: number };
}

export interface BenchKb {
  http: HttpClient;
  kbid: string;
  credential: NonNullable<Credential>;
  dataDir: string;
  manifest: Manifest;
  /** BEIR id of a resource, from its id (listing) or its slug (search results). */
  docIdOf(rid: string, slug?: string): string | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  dataset: string;
  limitDocs?: number;
  reuse?: string;
  keep: boolean;
  docMode: DocMode;
  concurrency: number;
  waitTimeoutS: number;
  /** With `limitDocs`, these documents (the judged relevant ones) are taken first so that quick runs have queries to score. */
  preferDocs?: ReadonlySet<string>;
}

function pickDocs(all: BeirDoc[], limit: number | undefined, prefer: ReadonlySet<string> | undefined): BeirDoc[] {
  if (limit === undefined || limit >= all.length) return all;
  if (!prefer) return all.slice(0, limit);
  const picked = all.filter((d) => prefer.has(d._id)).slice(0, limit);
  return [...picked, ...all.filter((d) => !prefer.has(d._id)).slice(0, limit - picked.length)];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let lastProgressAt = 0;
/** One rewritten line on a terminal; in a log, a line at most every 10 s plus the final one. */
const progress = (line: string, done = false) => {
  if (process.stdout.isTTY) return void process.stdout.write(`\r${line}\x1b[K${done ? '\n' : ''}`);
  if (!done && Date.now() - lastProgressAt < 10_000) return;
  lastProgressAt = done ? 0 : Date.now();
  console.log(line);
};

async function startService(dataDir: string): Promise<{ http: HttpClient; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = new ServiceProcess('standalone', distMain('standalone'), { PORT: String(port), DATA_DIR: dataDir }, dataDir);
  proc.start();
  await proc.waitReady(`http://127.0.0.1:${port}/health/ready`, 180_000);
  return { http: new HttpClient(`http://127.0.0.1:${port}`), stop: () => proc.stop('SIGTERM') };
}

export async function expectStatus<T>(what: string, res: Promise<{ status: number; body: T }>, status: number): Promise<T> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  return r.body;
}

/** A KB of its own and a Contributor key for it, made with the bootstrap user's token. */
async function createKb(http: HttpClient, boot: BootstrapFile, dataset: string): Promise<{ kbid: string; token: string }> {
  const pat = bearer(boot.personal_access_token.token);
  const account = `/api/v1/account/${boot.account.id}`;
  const slug = `bench-${dataset.replace(/[^a-zA-Z0-9:_-]/g, '_')}-${Date.now()}`;
  const kb = await expectStatus(
    'create KB',
    http.call<{ id: string }>('POST', `${account}/kbs`, { credential: pat, body: { slug, title: `Retrieval benchmark: ${dataset}` } }),
    201,
  );
  const sa = await expectStatus(
    'create service account',
    http.call<{ id: string }>('POST', `${account}/kb/${kb.id}/service_accounts`, {
      credential: pat,
      body: { title: 'retrieval-bench', role: 'SCONTRIBUTOR' },
    }),
    201,
  );
  const expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
  const key = await expectStatus(
    'create API key',
    http.call<{ token: string }>('POST', `${account}/kb/${kb.id}/service_account/${sa.id}/keys`, { credential: pat, body: { expires } }),
    201,
  );
  return { kbid: kb.id, token: key.token };
}

/** Creates the resources with `concurrency` requests in flight; fails if any create fails. */
async function ingest(
  http: HttpClient,
  kbid: string,
  credential: Credential,
  bodies: Record<string, unknown>[],
  concurrency: number,
): Promise<number> {
  const started = performance.now();
  let next = 0;
  let created = 0;
  const failures: string[] = [];
  const ticker = setInterval(() => progress(`creating resources: ${created}/${bodies.length}`), 2000);
  const worker = async () => {
    while (next < bodies.length && failures.length < 10) {
      const body = bodies[next++];
      let res = await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential, body });
      let retried = false;
      if (res.status === 429 || res.status >= 500) {
        await sleep(1000);
        retried = true;
        res = await http.call('POST', `/api/v1/kb/${kbid}/resources`, { credential, body });
      }
      // A 5xx (a gateway deadline on a loaded machine) leaves the first create's outcome unknown:
      // when it did happen, the retry meets its slug.
      if (res.status === 201 || (retried && res.status === 409)) created++;
      else failures.push(`${String(body['slug'])}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker)).finally(() => clearInterval(ticker));
  if (failures.length > 0) throw new Error(`resource creation failed (${failures.length} shown):\n${failures.join('\n')}`);
  const seconds = (performance.now() - started) / 1000;
  progress(`created ${created} resources in ${seconds.toFixed(1)} s (${(created / seconds).toFixed(1)} docs/s)`, true);
  return seconds;
}

/** Pages through the KB until no resource is PENDING and all `expected` are listed. Returns rid → slug and the ERROR count. */
async function waitProcessed(http: HttpClient, kbid: string, credential: Credential, expected: number, timeoutS: number) {
  const deadline = Date.now() + timeoutS * 1000;
  let lastLine = '';
  for (;;) {
    const slugOf = new Map<string, string>();
    const counts: Record<string, number> = {};
    for (let page = 0; ; page++) {
      const res = await expectStatus(
        'list resources',
        http.call<{ resources: { id: string; slug?: string; metadata?: { status?: string } }[]; pagination: { last: boolean } }>(
          'GET',
          `/api/v1/kb/${kbid}/resources?size=200&page=${page}`,
          { credential },
        ),
        200,
      );
      for (const r of res.resources) {
        slugOf.set(r.id, r.slug ?? '');
        const status = r.metadata?.status ?? 'UNKNOWN';
        counts[status] = (counts[status] ?? 0) + 1;
      }
      if (res.pagination.last || res.resources.length === 0) break;
    }
    const pending = (counts['PENDING'] ?? 0) + (counts['UNKNOWN'] ?? 0);
    lastLine =
      `processing: ${counts['PROCESSED'] ?? 0}/${expected} PROCESSED` +
      Object.entries(counts)
        .filter(([s]) => s !== 'PROCESSED')
        .map(([s, n]) => `, ${n} ${s}`)
        .join('');
    if (slugOf.size >= expected && pending === 0) {
      progress(lastLine, true);
      return { slugOf, errors: slugOf.size - (counts['PROCESSED'] ?? 0) };
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutS} s waiting for processing (${lastLine})`);
    progress(lastLine);
    await sleep(2000);
  }
}

/** Starts the service on a fresh (or reused) data dir and returns a KB holding the data set. */
export async function openBenchKb(o: OpenOptions): Promise<BenchKb> {
  if (o.reuse) reusedDataset(o.reuse);
  const dataDir = o.reuse ? resolve(o.reuse) : mkdtempSync(join(tmpdir(), 'kb-bench-retrieval-'));
  console.log(`data dir: ${dataDir}${o.reuse ? ' (reused)' : ''}`);
  const discard = () => {
    if (!o.keep && !o.reuse) rmSync(dataDir, { recursive: true, force: true });
    else console.log(`data dir kept: ${dataDir} (reuse it with --reuse ${dataDir})`);
  };
  const service = await startService(dataDir).catch((err: unknown) => {
    discard();
    throw err;
  });
  // Ctrl-C mid-ingestion still stops the service (and drops a fresh data dir).
  const onSignal = () => void close().finally(() => process.exit(130));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const close = async () => {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await service.stop();
    discard();
  };
  try {
    let manifest: Manifest;
    let slugOf: Map<string, string>;
    if (o.reuse) {
      manifest = JSON.parse(readFileSync(join(dataDir, MANIFEST), 'utf8')) as Manifest;
      if (manifest.dataset !== o.dataset) throw new Error(`${dataDir} holds ${manifest.dataset}, not ${o.dataset}`);
      slugOf = (await waitProcessed(service.http, manifest.kbid, apiKey(manifest.api_key), manifest.ingestion.docs, o.waitTimeoutS)).slugOf;
    } else {
      const docs = pickDocs(readCorpus(join(datasetDir(o.dataset), 'corpus.jsonl')), o.limitDocs, o.preferDocs);
      const slugs = slugsFor(docs);
      const bodies = [...slugs].flatMap(([slug, id], i) => {
        const body = resourceBody(docs[i] as BeirDoc, slug, o.docMode);
        if (!body) console.warn(`skipping ${id}: no title and no text`);
        return body ? [body] : [];
      });
      const kb = await createKb(
        service.http,
        JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as BootstrapFile,
        o.dataset,
      );
      const started = performance.now();
      const createS = await ingest(service.http, kb.kbid, apiKey(kb.token), bodies, o.concurrency);
      const waited = await waitProcessed(service.http, kb.kbid, apiKey(kb.token), bodies.length, o.waitTimeoutS);
      const processedS = (performance.now() - started) / 1000;
      slugOf = waited.slugOf;
      const kept = new Set(bodies.map((b) => String(b['slug'])));
      manifest = {
        dataset: o.dataset,
        doc_mode: o.docMode,
        limit_docs: o.limitDocs ?? null,
        kbid: kb.kbid,
        api_key: kb.token,
        slugs: Object.fromEntries([...slugs].filter(([slug]) => kept.has(slug))),
        ingestion: { docs: bodies.length, create_s: createS, processed_s: processedS, errors: waited.errors },
      };
      writeFileSync(join(dataDir, MANIFEST), JSON.stringify(manifest) + '\n', { mode: 0o600 });
      console.log(
        `ingestion: ${bodies.length} docs PROCESSED in ${processedS.toFixed(1)} s (${(bodies.length / processedS).toFixed(1)} docs/s end to end; creates alone ${(bodies.length / createS).toFixed(1)} docs/s)${waited.errors ? `; ${waited.errors} not PROCESSED (ERROR/other)` : ''}`,
      );
    }
    const credential = apiKey(manifest.api_key);
    const slugs = new Map(Object.entries(manifest.slugs));
    return {
      http: service.http,
      kbid: manifest.kbid,
      credential,
      dataDir,
      manifest,
      close,
      docIdOf: (rid, slug) => slugs.get(slugOf.get(rid) ?? slug ?? ''),
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Queries that have a relevant document among the ingested ones, with the qrels cut to those documents. */
export function judgedQueries(files: DatasetFiles, ingested: ReadonlySet<string>): { queries: BeirQuery[]; qrels: Qrels; dropped: number } {
  const qrels: Qrels = new Map();
  let dropped = 0;
  for (const [qid, judged] of readQrels(files.qrels)) {
    const kept = new Map([...judged].filter(([doc]) => ingested.has(doc)));
    dropped += judged.size - kept.size;
    if ([...kept.values()].some((g) => g > 0)) qrels.set(qid, kept);
  }
  return { queries: readQueries(files.queries).filter((q) => qrels.has(q._id)), qrels, dropped };
}

// ---- query phase ----

interface FindConfig {
  name: string;
  body: Record<string, unknown>;
}

interface FindResponse {
  resources?: Record<string, { slug?: string; fields?: Record<string, { paragraphs?: Record<string, { order?: number }> }> }>;
  best_matches?: string[];
}

/** Documents in the order their resources first appear in `best_matches` (or by paragraph `order`). */
function rankedDocIds(res: FindResponse, kb: BenchKb): { docs: string[]; unmapped: number } {
  let pids = res.best_matches;
  if (!Array.isArray(pids)) {
    const all = Object.values(res.resources ?? {}).flatMap((r) =>
      Object.values(r.fields ?? {}).flatMap((f) => Object.entries(f.paragraphs ?? {})),
    );
    pids = all.sort((a, b) => (a[1].order ?? 0) - (b[1].order ?? 0)).map(([pid]) => pid);
  }
  const docs: string[] = [];
  const seen = new Set<string>();
  let unmapped = 0;
  for (const pid of pids) {
    const rid = pid.split('/')[0] ?? '';
    if (seen.has(rid)) continue;
    seen.add(rid);
    const doc = kb.docIdOf(rid, res.resources?.[rid]?.slug);
    if (doc === undefined) unmapped++;
    else docs.push(doc);
  }
  return { docs, unmapped };
}

class FindUnavailableError extends Error {}

/** One timed `/find`; latency covers the whole response body. */
async function find(kb: BenchKb, body: Record<string, unknown>): Promise<{ ms: number; res: FindResponse }> {
  const url = `${kb.http.baseUrl}/api/v1/kb/${kb.kbid}/find`;
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { [kb.credential.header]: kb.credential.value, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status === 404)
    throw new FindUnavailableError(
      `POST /api/v1/kb/{kbid}/find answered 404 (${text.slice(0, 200)}): /find is not in this build yet (or the KB is gone)`,
    );
  if (res.status !== 200 && res.status !== 206)
    throw new Error(`/find answered HTTP ${res.status}: ${text.slice(0, 500)} (body ${JSON.stringify({ ...body, query: '…' })})`);
  return { ms, res: JSON.parse(text) as FindResponse };
}

/** `rrf` or `rrf:k=60:keyword=1:semantic=0.5:window=200`, `weighted:semantic=0.2`; `default` sends no rank_fusion. */
function parseFusion(spec: string): { label: string; rank_fusion?: Record<string, unknown> } {
  if (spec === 'default') return { label: 'default fusion' };
  const [name, ...params] = spec.split(':');
  if (name === 'weighted') {
    const w = Number(/semantic=([0-9.]+)/.exec(spec)?.[1] ?? NaN);
    if (!Number.isFinite(w)) throw new Error(`--fusion ${spec}: weighted needs semantic=<weight>`);
    return { label: `weighted sem=${w}`, rank_fusion: { name: 'weighted', boosting: { semantic: w } } };
  }
  if (name !== 'rrf')
    throw new Error(`--fusion ${spec}: only default, weighted:semantic=.. and rrf[:k=..:keyword=..:semantic=..:window=..] are known`);
  const p: Record<string, number> = { k: 60, keyword: 1, semantic: 1 };
  for (const kv of params) {
    const [key, value] = kv.split('=');
    if (!key || !['k', 'keyword', 'semantic', 'window'].includes(key) || !Number.isFinite(Number(value)))
      throw new Error(`--fusion ${spec}: bad parameter ${kv}`);
    p[key] = Number(value);
  }
  const rank_fusion = {
    name: 'rrf',
    k: p['k'],
    ...(p['window'] !== undefined ? { window: p['window'] } : {}),
    boosting: { keyword: p['keyword'], semantic: p['semantic'] },
  };
  return {
    label: `rrf k=${p['k']} kw=${p['keyword']} sem=${p['semantic']}${p['window'] !== undefined ? ` window=${p['window']}` : ''}`,
    rank_fusion,
  };
}

function configurations(features: string, fusions: string, extra: Record<string, unknown>): FindConfig[] {
  const configs: FindConfig[] = [];
  for (const set of features
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const list = set.split('+');
    if (list.length === 1) configs.push({ name: `${set} only`, body: { features: list, ...extra } });
    else
      for (const f of fusions
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const { label, rank_fusion } = parseFusion(f);
        configs.push({ name: `${list.join('+')} (${label})`, body: { features: list, ...(rank_fusion ? { rank_fusion } : {}), ...extra } });
      }
  }
  return configs;
}

async function runConfig(kb: BenchKb, config: FindConfig, queries: BeirQuery[], qrels: Qrels) {
  for (const q of queries.slice(0, 5)) await find(kb, { ...config.body, query: q.text }); // warm-up: JIT, model, caches
  const rankings = new Map<string, string[]>();
  const latencies: number[] = [];
  let unmapped = 0;
  for (const [i, q] of queries.entries()) {
    const { ms, res } = await find(kb, { ...config.body, query: q.text });
    latencies.push(ms);
    const ranked = rankedDocIds(res, kb);
    unmapped += ranked.unmapped;
    rankings.set(q._id, ranked.docs);
    if (i % 25 === 24) progress(`${config.name}: ${i + 1}/${queries.length} queries`);
  }
  progress(`${config.name}: ${queries.length}/${queries.length} queries`, true);
  if (unmapped > 0) console.warn(`${config.name}: ${unmapped} hits named resources that are not in the data set`);
  const metrics = evaluate(rankings, qrels, { ndcg: 10, recall: 100 });
  return {
    configuration: config.name,
    ndcg_10: metrics.ndcg,
    recall_100: metrics.recall,
    p50_ms: percentile(latencies, 50),
    p95_ms: percentile(latencies, 95),
    p99_ms: percentile(latencies, 99),
    queries: metrics.queries,
  };
}

export function cliArgs(): string[] {
  return process.argv.slice(2).filter((a) => a !== '--');
}

/** A numeric option, refused when it is not a number of at least `min`. */
export function numberArg(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} ${value}: expected a number ≥ ${min}`);
  return n;
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      dataset: { type: 'string' },
      split: { type: 'string' },
      'limit-docs': { type: 'string' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
      features: { type: 'string', default: 'keyword,semantic,keyword+semantic' },
      fusion: { type: 'string', default: 'default,rrf' },
      'doc-mode': { type: 'string', default: 'title-in-body' },
      'top-k': { type: 'string', default: '100' },
      reranker: { type: 'string' },
      'min-semantic': { type: 'string' },
      'min-bm25': { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      'wait-timeout': { type: 'string', default: '7200' },
    },
  });
  const docMode = a['doc-mode'];
  if (docMode !== 'title-in-body' && docMode !== 'separate') throw new Error('--doc-mode is title-in-body or separate');
  const minScore = { semantic: numberArg('min-semantic', a['min-semantic'], -Infinity), bm25: numberArg('min-bm25', a['min-bm25'], 0) };
  const min_score = Object.fromEntries(Object.entries(minScore).filter(([, v]) => v !== undefined));
  const extra = {
    top_k: numberArg('top-k', a['top-k']) ?? 100,
    ...(a.reranker ? { reranker: a.reranker } : {}),
    ...(Object.keys(min_score).length ? { min_score } : {}),
  };
  const configs = configurations(a.features, a.fusion, extra);
  const dataset = a.dataset ?? (a.reuse ? reusedDataset(a.reuse) : 'scifact');
  const files = datasetFiles(dataset, a.split);

  const limitDocs = numberArg('limit-docs', a['limit-docs']);
  const relevant = new Set(
    [...readQrels(files.qrels).values()].flatMap((judged) => [...judged].filter(([, g]) => g > 0).map(([doc]) => doc)),
  );
  if (limitDocs !== undefined && !a.reuse)
    console.log(
      `--limit-docs ${limitDocs}: the split's relevant docs go in first, so scores run high; compare only with runs of the same limit`,
    );
  const kb = await openBenchKb({
    dataset,
    preferDocs: relevant,
    limitDocs,
    reuse: a.reuse,
    keep: a.keep,
    docMode,
    concurrency: numberArg('concurrency', a.concurrency) ?? 8,
    waitTimeoutS: numberArg('wait-timeout', a['wait-timeout']) ?? 7200,
  });
  const rows: Awaited<ReturnType<typeof runConfig>>[] = [];
  let failed = false;
  try {
    const m = kb.manifest;
    if (m.doc_mode !== docMode) console.warn(`note: the reused data dir was ingested with --doc-mode ${m.doc_mode}`);
    const { queries, qrels, dropped } = judgedQueries(files, new Set(Object.values(m.slugs)));
    console.log(
      `${m.dataset}${files.split ? ` ${files.split}` : ''}: ${m.ingestion.docs} docs (${m.doc_mode}), ${queries.length} judged queries` +
        (dropped ? ` (qrels cut to the ingested docs: ${dropped} judgements dropped)` : ''),
    );
    if (a.reuse)
      console.log(
        `ingestion (when the dir was made): ${m.ingestion.docs} docs in ${m.ingestion.processed_s.toFixed(1)} s = ${(m.ingestion.docs / m.ingestion.processed_s).toFixed(1)} docs/s to PROCESSED`,
      );
    await find(kb, { query: queries[0]?.text ?? 'probe', top_k: 1 }); // a missing /find fails here, once
    if (queries.length === 0) throw new Error('no judged query has a relevant document among the ingested ones: raise --limit-docs');
    for (const config of configs) {
      try {
        rows.push(await runConfig(kb, config, queries, qrels));
      } catch (err) {
        if (err instanceof FindUnavailableError) throw err;
        failed = true;
        console.error(`${config.name}: ${(err as Error).message}`);
      }
    }
  } finally {
    await kb.close();
  }
  const f3 = (n: number) => n.toFixed(3);
  const f1 = (n: number) => n.toFixed(1);
  console.log(`\n| configuration | nDCG@10 | Recall@100 | p50 ms | p95 ms | p99 ms | queries |\n|---|---|---|---|---|---|---|`);
  for (const r of rows)
    console.log(
      `| ${r.configuration} | ${f3(r.ndcg_10)} | ${f3(r.recall_100)} | ${f1(r.p50_ms)} | ${f1(r.p95_ms)} | ${f1(r.p99_ms)} | ${r.queries} |`,
    );
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `retrieval-${dataset.replace(/[^a-zA-Z0-9_-]/g, '_')}${files.split ? `-${files.split}` : ''}.json`);
  const { api_key: _secret, slugs: _slugs, ...manifest } = kb.manifest;
  writeFileSync(
    out,
    JSON.stringify(
      { date: new Date().toISOString(), dataset, split: files.split, top_k: extra.top_k, manifest, configurations: configs, rows },
      null,
      2,
    ),
  );
  console.log(`\nwritten to ${out}`);
  if (failed) process.exit(1);
}

// find-load.bench imports the ingestion helpers above; only a direct run benchmarks.
if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof FindUnavailableError ? `\n${err.message}` : err);
    process.exit(1);
  });
}
