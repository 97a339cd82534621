import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hashedEmbedding } from '@kb/platform/testing';
import { apiKey, bearer, HttpClient, type Credential } from '../support/http-client';
import { REPO_ROOT, ServiceProcess, distMain, freePort } from '../support/processes';
import { percentile } from './ir-metrics';
import { cliArgs, expectStatus, numberArg } from './retrieval.bench';
import { queries, resourceBody, VOCAB } from './synthetic-text';

/**
 * Scale benchmark: a synthetic knowledge box grown in stages (e.g. 10 k → 100 k → 1 M paragraphs)
 * through the public API on the embedded default (standalone, PGlite), with /find latency measured
 * after each stage — hybrid and keyword, with and without a label filter — and how build time,
 * process memory and the data directory grow.
 *
 *   npm run bench -- scale --stages 10000,100000,1000000 [--per-resource 20] [--labels 20] [--queries 200] [--keep]
 *   npm run bench -- scale --reuse <dir> --stages 2000000     # grow a kept KB further
 *   npm run bench -- scale --reuse <dir> --stages 0           # measure a kept KB again (e.g. after a change)
 *
 * After each stage's queries, `--writes` (20) single resources are created one at a time, and the
 * first /find after each (hybrid, label filter) is timed: a KB under writes.
 *
 * The service runs with `--search-memory-mb` (4096) and `--search-memory-max-paragraphs`
 * (2,000,000) as SEARCH_MEMORY_MB / SEARCH_MEMORY_MAX_PARAGRAPHS, so that the KB's search index is
 * held in memory at every stage (`--search-memory-mb 0`: SQL only). Before measuring, the benchmark
 * waits until /find answers from the memory index (debug metrics) and reports how long that took,
 * and the longest the service took meanwhile to answer /health/live (how long the build stalls it).
 * The embedded database gets `--shared-buffers` (1GB; EMBEDDED_DB_SHARED_BUFFERS) instead of
 * PGlite's 128MB: a KB of 100 k paragraphs is already a few GB of tables and indexes.
 * `--random-page-cost` sets EMBEDDED_DB_RANDOM_PAGE_COST (the service's default otherwise).
 * `--vector-index none` runs the service with SEARCH_VECTOR_INDEX=none (no HNSW graph to build;
 * exact semantic search); a KB kept and grown again must use the same setting.
 *
 * The text is generated (Zipf-distributed pseudo-words, deterministic), one label of `--labels` per
 * resource, so a label filter keeps 1/labels of the KB. The semantic model is, by default, an
 * OpenAI-compatible embeddings server started here that hashes words into `--dimensions` (384)
 * numbers: the benchmark measures the index, not a model (`--embedder builtin` uses the built-in
 * model instead, whose own speed then bounds the build).
 */

interface Manifest {
  kbid: string;
  api_key: string;
  paragraphs: number;
  resources: number;
  per_resource: number;
  labels: number;
  dimensions: number;
  embedder: 'hashed' | 'builtin';
  stages: StageRow[];
}

interface StageRow {
  paragraphs: number;
  build_s: number;
  /** Seconds from the end of the build until /find answered from the memory index (null: SQL only). */
  memory_index_s: number | null;
  /** Longest /health/live answer while the memory index was built (the service's longest stall). */
  memory_index_stall_ms?: number;
  /** A kept KB measured again (`--stages 0`), nothing built. */
  remeasured?: boolean;
  paragraphs_per_s: number;
  rss_max_mb: number;
  rss_after_mb: number;
  data_dir_mb: number;
  queries: Record<string, { p50_ms: number; p95_ms: number; p99_ms: number; hits: number }>;
  /** The first /find after each of `writes` single-resource writes (`--writes`). */
  after_write?: { p50_ms: number; p95_ms: number; max_ms: number; memory_index: number; writes: number };
}

const MANIFEST = 'scale-manifest.json';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An OpenAI-compatible embeddings server hashing words into `dimensions` numbers (remembers nothing). */
async function startHashedEmbeddings(dimensions: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { input?: unknown; model?: string };
      const input = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: hashedEmbedding(text, dimensions) }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise((r) => server.close(() => r())) };
}

function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    // The service and its worker threads are one process; its children (none expected) are not counted.
    return (
      Number(
        execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
          .toString()
          .trim(),
      ) / 1024
    );
  } catch {
    return 0;
  }
}

function dirMb(dir: string): number {
  try {
    return Number(execFileSync('du', ['-sk', dir]).toString().split('\t')[0]) / 1024;
  } catch {
    return 0;
  }
}

async function createKb(http: HttpClient, dataDir: string, learning: Record<string, unknown>): Promise<{ kbid: string; token: string }> {
  const boot = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as {
    account: { id: string };
    personal_access_token: { token: string };
  };
  const pat = bearer(boot.personal_access_token.token);
  const account = `/api/v1/account/${boot.account.id}`;
  const kb = await expectStatus(
    'create KB',
    http.call<{ id: string }>('POST', `${account}/kbs`, {
      credential: pat,
      body: { slug: `scale-${Date.now()}`, title: 'Scale benchmark', learning_configuration: learning },
    }),
    201,
  );
  const sa = await expectStatus(
    'create service account',
    http.call<{ id: string }>('POST', `${account}/kb/${kb.id}/service_accounts`, {
      credential: pat,
      body: { title: 'scale-bench', role: 'SCONTRIBUTOR' },
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

/**
 * Waits until /find answers from the memory index (debug metrics): seconds it took (null on
 * timeout), and the longest the service took meanwhile to answer /health/live, asked every
 * 100 ms — how long building the index stalls every other request.
 */
async function waitForMemoryIndex(
  http: HttpClient,
  kbid: string,
  credential: NonNullable<Credential>,
  timeoutS: number,
  onTick: () => void = () => undefined,
): Promise<{ seconds: number | null; stallMs: number }> {
  const started = performance.now();
  let done = false;
  let stallMs = 0;
  const monitor = (async () => {
    while (!done) {
      const t = performance.now();
      await fetch(`${http.baseUrl}/health/live`)
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      stallMs = Math.max(stallMs, performance.now() - t);
      onTick();
      await sleep(100);
    }
  })();
  try {
    for (;;) {
      // A probe sent on a kept-alive socket the server has just closed fails: asked again.
      const body = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/find`, {
        method: 'POST',
        headers: { [credential.header]: credential.value, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'memory probe', features: ['keyword'], top_k: 1, debug: true }),
      })
        .then((res) => res.json() as Promise<{ metrics?: Record<string, number> }>)
        .catch((err: unknown) => {
          console.log(`memory index probe failed (${String((err as Error).cause ?? err)}): asked again`);
          return {} as { metrics?: Record<string, number> };
        });
      const s = (performance.now() - started) / 1000;
      if (body.metrics?.['memory_index'] === 1) return { seconds: Math.round(s), stallMs: Math.round(stallMs) };
      if (s > timeoutS) return { seconds: null, stallMs: Math.round(stallMs) };
      await sleep(2_000);
    }
  } finally {
    done = true;
    await monitor;
  }
}

/** Resources still PENDING, from the catalog's status filter (one small request, whatever the KB's size). */
async function pending(http: HttpClient, kbid: string, credential: Credential): Promise<number> {
  const r = await expectStatus(
    'catalog',
    http.call<{ fulltext: { total: number } }>('GET', `/api/v1/kb/${kbid}/catalog?with_status=PENDING&page_size=1`, { credential }),
    200,
  );
  return r.fulltext.total;
}

async function grow(
  http: HttpClient,
  m: Manifest,
  credential: Credential,
  upTo: number,
  concurrency: number,
  onTick: () => void,
): Promise<void> {
  const target = Math.ceil(upTo / m.per_resource);
  let next = m.resources;
  const failures: string[] = [];
  const worker = async () => {
    while (next < target && failures.length < 10) {
      const i = next++;
      const body = resourceBody(i, m.per_resource, m.labels);
      // A kept-alive socket the server closed while the benchmark measured (idle past its
      // keep-alive timeout) fails the next request on it: sent again, like a 429 or a 5xx (a create
      // that did land answers 409 the second time).
      const create = () =>
        http
          .call('POST', `/api/v1/kb/${m.kbid}/resources`, { credential, body })
          .catch((err: unknown) => ({ status: 0, body: String((err as Error).cause ?? err) }));
      let res = await create();
      for (let attempt = 0; (res.status === 0 || res.status === 429 || res.status >= 500) && attempt < 5; attempt++) {
        await sleep(1000 * (attempt + 1));
        res = await create();
      }
      // 409: the slug exists — created by an earlier run that was stopped mid-stage (resumed with --reuse)
      if (res.status !== 201 && res.status !== 409) failures.push(`doc-${i}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  };
  const ticker = setInterval(() => {
    onTick();
    console.log(`created ${Math.min(next, target)}/${target} resources`);
  }, 10_000);
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    clearInterval(ticker);
  }
  if (failures.length) throw new Error(`creates failed:\n${failures.join('\n')}`);
  m.resources = target;
  m.paragraphs = target * m.per_resource;
}

/** How many results an endpoint's answer carries (best_matches of /find, paragraphs of /search and /suggest). */
function hitsOf(path: string, body: Record<string, unknown>): number {
  if (path === 'find') return (body['best_matches'] as string[]).length;
  if (path === 'catalog') return Object.keys(body['resources'] as Record<string, unknown>).length;
  return ((body['paragraphs'] as { results: unknown[] } | undefined)?.results ?? []).length;
}

async function timedQuery(
  http: HttpClient,
  kbid: string,
  credential: NonNullable<Credential>,
  body: Record<string, unknown>,
  path = 'find',
): Promise<{ ms: number; hits: number }> {
  const started = performance.now();
  const res = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/${path}`, {
    method: 'POST',
    headers: { [credential.header]: credential.value, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`/${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return { ms, hits: hitsOf(path, JSON.parse(text) as Record<string, unknown>) };
}

/** A query as typed so far: its words but the last, and the last one's first three letters (/suggest). */
const typing = (q: string) => {
  const words = q.split(' ');
  const last = words.pop() ?? '';
  return [...words, last.slice(0, 3)].join(' ');
};

/** The creation time of the resource `fraction` of the way from the newest (the catalog sorted by creation). */
async function createdAt(http: HttpClient, m: Manifest, credential: NonNullable<Credential>, fraction: number): Promise<string> {
  const page = Math.floor(m.resources * fraction);
  const r = await expectStatus(
    'catalog',
    http.call<{ resources: Record<string, { created: string }> }>('POST', `/api/v1/kb/${m.kbid}/catalog`, {
      credential,
      body: { query: '', sort: { field: 'created', order: 'desc' }, page_size: 1, page_number: page },
    }),
    200,
  );
  const created = Object.values(r.resources)[0]?.created;
  if (!created) throw new Error(`no resource at catalog page ${page}`);
  return created;
}

async function measureQueries(
  http: HttpClient,
  m: Manifest,
  credential: NonNullable<Credential>,
  count: number,
): Promise<StageRow['queries']> {
  const qs = queries(count);
  const label = { filter_expression: { field: { prop: 'label', labelset: 'topic', label: 't3' } } };
  // The newest 5 % of the resources, and the paragraphs holding a word ~4 % of them hold.
  const recent = { filter_expression: { field: { prop: 'created', since: await createdAt(http, m, credential, 0.05) } } };
  const keyword = { keyword_filters: [VOCAB.words[100] as string] };
  // Every vector may rank (hashed vectors are never negative): the semantic leg always fills its window.
  const semanticFloor = { min_score: { semantic: 0 } };
  const configs: Record<string, { path?: string; body: Record<string, unknown>; query?: (q: string) => string }> = {
    'hybrid, label filter': { body: { features: ['keyword', 'semantic'], top_k: 20, ...label, ...semanticFloor } },
    hybrid: { body: { features: ['keyword', 'semantic'], top_k: 20, ...semanticFloor } },
    'keyword, label filter': { body: { features: ['keyword'], top_k: 20, ...label } },
    'semantic, label filter': { body: { features: ['semantic'], top_k: 20, ...label, ...semanticFloor } },
    'hybrid, created in the newest 5 %': { body: { features: ['keyword', 'semantic'], top_k: 20, ...recent, ...semanticFloor } },
    'hybrid, keyword filter': { body: { features: ['keyword', 'semantic'], top_k: 20, ...keyword, ...semanticFloor } },
    '/search, label filter': {
      path: 'search',
      body: { features: ['keyword', 'fulltext', 'semantic'], top_k: 20, ...label, ...semanticFloor },
    },
    '/search, label filter, faceted': { path: 'search', body: { features: ['keyword'], top_k: 20, faceted: ['/l/topic'], ...label } },
    '/suggest': { path: 'suggest', body: {}, query: typing },
    // The catalog lists resources (title words match anywhere in the title, as LIKE '%word%').
    '/catalog': { path: 'catalog', body: { page_size: 20 }, query: () => '' },
    '/catalog, label filter, faceted': {
      path: 'catalog',
      body: { page_size: 20, filters: ['/l/topic/t3'], faceted: ['/l/topic'] },
      query: () => '',
    },
    '/catalog, a title word': { path: 'catalog', body: { page_size: 20 }, query: (q) => q.split(' ')[0] as string },
  };
  const out: StageRow['queries'] = {};
  for (const [name, { path = 'find', body, query = (q: string) => q }] of Object.entries(configs)) {
    if (path === 'find') {
      const probe = await fetch(`${http.baseUrl}/api/v1/kb/${m.kbid}/find`, {
        method: 'POST',
        headers: { [credential.header]: credential.value, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, query: qs[0], debug: true }),
      });
      const metrics = ((await probe.json()) as { metrics?: Record<string, number> }).metrics ?? {};
      console.log(
        `${name}: memory index ${metrics['memory_index'] ? 'used' : 'not used'}, filter decided ${metrics['memory_filter'] ? 'in memory' : 'in SQL'}`,
      );
    }
    for (const q of qs.slice(0, 5)) await timedQuery(http, m.kbid, credential, { ...body, query: query(q) }, path); // warm-up
    const ms: number[] = [];
    let hits = 0;
    for (const q of qs) {
      const r = await timedQuery(http, m.kbid, credential, { ...body, query: query(q) }, path);
      ms.push(r.ms);
      hits += r.hits;
    }
    out[name] = { p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), p99_ms: percentile(ms, 99), hits: hits / qs.length };
    console.log(
      `${name}: p50 ${out[name].p50_ms.toFixed(1)} ms, p95 ${out[name].p95_ms.toFixed(1)} ms, ${out[name].hits.toFixed(1)} hits a query`,
    );
  }
  return out;
}

/**
 * A KB under writes: `count` times, one more resource is created and processed, then /find (hybrid,
 * label filter) is asked at once — the first query to see the write. Its latency, and how many of
 * them the memory index answered (brought up to date from the change log) rather than SQL.
 */
async function measureAfterWrites(
  http: HttpClient,
  m: Manifest,
  credential: NonNullable<Credential>,
  count: number,
): Promise<NonNullable<StageRow['after_write']>> {
  const qs = queries(count + 1);
  const body = {
    features: ['keyword', 'semantic'],
    top_k: 20,
    filter_expression: { field: { prop: 'label', labelset: 'topic', label: 't3' } },
    min_score: { semantic: 0 },
    debug: true,
  };
  const ms: number[] = [];
  let memory = 0;
  for (let i = 0; i < count; i++) {
    const created = await expectStatus(
      'create',
      http.call<{ uuid: string }>('POST', `/api/v1/kb/${m.kbid}/resources`, {
        credential,
        body: resourceBody(m.resources, m.per_resource, m.labels),
      }),
      201,
    );
    m.resources += 1;
    m.paragraphs += m.per_resource;
    for (;;) {
      const r = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${m.kbid}/resource/${created.uuid}`, { credential });
      if (r.body.metadata?.status === 'PROCESSED') break;
      if (r.body.metadata?.status === 'ERROR') throw new Error(`resource ${created.uuid} failed processing`);
      await sleep(100);
    }
    const started = performance.now();
    const res = await fetch(`${http.baseUrl}/api/v1/kb/${m.kbid}/find`, {
      method: 'POST',
      headers: { [credential.header]: credential.value, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, query: qs[i] }),
    });
    const out = (await res.json()) as { metrics?: Record<string, number> };
    ms.push(performance.now() - started);
    if (out.metrics?.['memory_index'] === 1) memory++;
  }
  const r = { p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), max_ms: Math.max(...ms), memory_index: memory, writes: count };
  console.log(
    `first /find after a write (hybrid, label filter): p50 ${r.p50_ms.toFixed(1)} ms, p95 ${r.p95_ms.toFixed(1)} ms, max ${r.max_ms.toFixed(1)} ms; ${memory}/${count} from the memory index`,
  );
  console.log(`  each, ms: ${ms.map((x) => Math.round(x)).join(' ')}`);
  return r;
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      stages: { type: 'string', default: '10000,100000' },
      'per-resource': { type: 'string', default: '20' },
      labels: { type: 'string', default: '20' },
      queries: { type: 'string', default: '200' },
      dimensions: { type: 'string', default: '384' },
      embedder: { type: 'string', default: 'hashed' },
      concurrency: { type: 'string', default: '8' },
      reuse: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'wait-timeout': { type: 'string', default: '14400' },
      'search-memory-mb': { type: 'string', default: '4096' },
      'search-memory-max-paragraphs': { type: 'string', default: '2000000' },
      'shared-buffers': { type: 'string', default: '1GB' },
      'random-page-cost': { type: 'string' },
      'vector-index': { type: 'string', default: 'hnsw' },
      writes: { type: 'string', default: '20' },
    },
  });
  const stages = a.stages
    .split(',')
    .map((s) => numberArg('stages', s.trim(), 0) as number)
    .sort((x, y) => x - y);
  const memoryMb = numberArg('search-memory-mb', a['search-memory-mb'], 0) ?? 4096;
  const writes = numberArg('writes', a.writes, 0) ?? 20;
  if (a.embedder !== 'hashed' && a.embedder !== 'builtin') throw new Error('--embedder is hashed or builtin');
  const dataDir = a.reuse ? resolve(a.reuse) : mkdtempSync(join(tmpdir(), 'kb-bench-scale-'));
  if (a.reuse && !existsSync(join(dataDir, MANIFEST))) throw new Error(`${dataDir} holds no ${MANIFEST}`);
  console.log(`data dir: ${dataDir}`);
  const previous = a.reuse ? (JSON.parse(readFileSync(join(dataDir, MANIFEST), 'utf8')) as Manifest) : undefined;
  const dimensions = previous?.dimensions ?? numberArg('dimensions', a.dimensions) ?? 384;
  const embedder = previous?.embedder ?? (a.embedder as Manifest['embedder']);
  const embeddings = embedder === 'hashed' ? await startHashedEmbeddings(dimensions) : undefined;
  const port = await freePort();
  const proc = new ServiceProcess(
    'standalone',
    distMain('standalone'),
    {
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SEARCH_MEMORY_MB: String(memoryMb),
      // The KB's model is the benchmark's own OpenAI-compatible server on this machine.
      PROCESSING_ALLOW_PRIVATE_NETWORKS: 'true',
      EMBEDDED_DB_SHARED_BUFFERS: a['shared-buffers'],
      SEARCH_VECTOR_INDEX: String(a['vector-index']),
      SEARCH_MEMORY_MAX_PARAGRAPHS: String(numberArg('search-memory-max-paragraphs', a['search-memory-max-paragraphs']) ?? 2_000_000),
      ...(a['random-page-cost'] ? { EMBEDDED_DB_RANDOM_PAGE_COST: a['random-page-cost'] } : {}),
    },
    dataDir,
  );
  proc.start();
  await proc.waitReady(`http://127.0.0.1:${port}/health/ready`, 600_000);
  const http = new HttpClient(`http://127.0.0.1:${port}`);
  let failed = false;
  try {
    let m: Manifest;
    if (previous) {
      m = previous;
      // The embeddings server's address changes with every run: point the KB at this one.
      if (embeddings) {
        const boot = JSON.parse(readFileSync(join(dataDir, 'bootstrap.json'), 'utf8')) as { personal_access_token: { token: string } };
        await expectStatus(
          'configuration',
          http.call('PATCH', `/api/v1/kb/${m.kbid}/configuration`, {
            credential: bearer(boot.personal_access_token.token),
            body: { user_keys: { openai_compatible: { url: embeddings.url, model: `hash-${dimensions}`, size: dimensions } } },
          }),
          204,
        );
      }
    } else {
      const learning = embeddings
        ? {
            semantic_models: ['hf_embedding'],
            default_semantic_model: 'hf_embedding',
            user_keys: { openai_compatible: { url: embeddings.url, model: `hash-${dimensions}`, size: dimensions } },
          }
        : {};
      const kb = await createKb(http, dataDir, learning);
      m = {
        kbid: kb.kbid,
        api_key: kb.token,
        paragraphs: 0,
        resources: 0,
        per_resource: numberArg('per-resource', a['per-resource']) ?? 20,
        labels: numberArg('labels', a.labels) ?? 20,
        dimensions,
        embedder,
        stages: [],
      };
    }
    const credential = apiKey(m.api_key);
    for (const stage of stages) {
      if (stage === 0 && m.paragraphs > 0) {
        // measure the KB as it is (a kept KB, after a change to the service)
        console.log(`\n== measuring ${m.paragraphs} paragraphs ==`);
        // the largest RSS seen while the memory index builds (a kept KB's process starts without it)
        let rssMax = rssMb(proc.pid);
        const sampleRss = () => (rssMax = Math.max(rssMax, rssMb(proc.pid)));
        const wait = memoryMb > 0 ? await waitForMemoryIndex(http, m.kbid, credential, 3600, sampleRss) : null;
        const memoryS = wait?.seconds ?? null;
        console.log(`memory index: ${memoryS === null ? 'not used' : `answering after ${memoryS} s, longest stall ${wait?.stallMs} ms`}`);
        const q = await measureQueries(http, m, credential, numberArg('queries', a.queries) ?? 200);
        const afterWrite = writes > 0 ? await measureAfterWrites(http, m, credential, writes) : undefined;
        const rssAfter = rssMb(proc.pid);
        m.stages.push({
          paragraphs: m.paragraphs,
          build_s: 0,
          memory_index_s: memoryS,
          memory_index_stall_ms: wait?.stallMs,
          paragraphs_per_s: 0,
          rss_max_mb: Math.round(Math.max(rssMax, rssAfter)),
          rss_after_mb: Math.round(rssAfter),
          data_dir_mb: Math.round(dirMb(dataDir)),
          queries: q,
          after_write: afterWrite,
          remeasured: true,
        });
        writeFileSync(join(dataDir, MANIFEST), JSON.stringify(m, null, 2), { mode: 0o600 });
        continue;
      }
      if (stage <= m.paragraphs) continue;
      console.log(`\n== growing to ${stage} paragraphs (${Math.ceil(stage / m.per_resource)} resources) ==`);
      let rssMax = rssMb(proc.pid);
      const sampleRss = () => (rssMax = Math.max(rssMax, rssMb(proc.pid)));
      const before = m.paragraphs;
      const started = performance.now();
      await grow(http, m, credential, stage, numberArg('concurrency', a.concurrency) ?? 8, sampleRss);
      const deadline = Date.now() + (numberArg('wait-timeout', a['wait-timeout']) ?? 14400) * 1000;
      for (;;) {
        sampleRss();
        const left = await pending(http, m.kbid, credential);
        if (left === 0) break;
        if (Date.now() > deadline) throw new Error(`timed out with ${left} resources PENDING`);
        console.log(`processing: ${left} resources PENDING`);
        await sleep(10_000);
      }
      const buildS = (performance.now() - started) / 1000;
      writeFileSync(join(dataDir, MANIFEST), JSON.stringify(m, null, 2), { mode: 0o600 });
      console.log(
        `built ${m.paragraphs - before} paragraphs in ${buildS.toFixed(0)} s (${((m.paragraphs - before) / buildS).toFixed(0)} paragraphs/s); measuring /find`,
      );
      const wait = memoryMb > 0 ? await waitForMemoryIndex(http, m.kbid, credential, 3600, sampleRss) : null;
      const memoryS = wait?.seconds ?? null;
      sampleRss();
      console.log(`memory index: ${memoryS === null ? 'not used' : `answering after ${memoryS} s, longest stall ${wait?.stallMs} ms`}`);
      const q = await measureQueries(http, m, credential, numberArg('queries', a.queries) ?? 200);
      const afterWrite = writes > 0 ? await measureAfterWrites(http, m, credential, writes) : undefined;
      m.stages.push({
        paragraphs: m.paragraphs,
        build_s: Math.round(buildS),
        memory_index_s: memoryS,
        memory_index_stall_ms: wait?.stallMs,
        paragraphs_per_s: Math.round((m.paragraphs - before) / buildS),
        rss_max_mb: Math.round(rssMax),
        rss_after_mb: Math.round(rssMb(proc.pid)),
        data_dir_mb: Math.round(dirMb(dataDir)),
        queries: q,
        after_write: afterWrite,
      });
      writeFileSync(join(dataDir, MANIFEST), JSON.stringify(m, null, 2), { mode: 0o600 });
    }
    // (every query any stage measured: a kept KB measured again may have more)
    const names = [...new Set(m.stages.flatMap((s) => Object.keys(s.queries)))];
    console.log(
      `\n| paragraphs | build s | paragraphs/s | memory index s | max RSS MB | data dir MB | ${names.map((n) => `${n} p50 / p95 ms`).join(' | ')} | first after a write p50 / p95 ms (from memory) |`,
    );
    console.log(`|---|---|---|---|---|---|${names.map(() => '---|').join('')}---|`);
    for (const s of m.stages) {
      const w = s.after_write
        ? `${s.after_write.p50_ms.toFixed(1)} / ${s.after_write.p95_ms.toFixed(1)} (${s.after_write.memory_index}/${s.after_write.writes})`
        : '–';
      console.log(
        `| ${s.paragraphs} | ${s.build_s} | ${s.paragraphs_per_s} | ${s.memory_index_s ?? '–'} | ${s.rss_max_mb} | ${s.data_dir_mb} | ${names
          .map((n) => {
            const x = s.queries[n];
            return x ? `${x.p50_ms.toFixed(1)} / ${x.p95_ms.toFixed(1)}` : '–';
          })
          .join(' | ')} | ${w} |`,
      );
    }
    const dir = join(REPO_ROOT, 'tmp', 'bench');
    mkdirSync(dir, { recursive: true });
    const { api_key: _secret, ...out } = m;
    writeFileSync(join(dir, 'scale.json'), JSON.stringify({ date: new Date().toISOString(), ...out }, null, 2));
  } catch (err) {
    failed = true;
    console.error(err);
  } finally {
    await proc.stop('SIGTERM');
    await embeddings?.close();
    if (!a.keep && !a.reuse) rmSync(dataDir, { recursive: true, force: true });
    else console.log(`data dir kept: ${dataDir} (grow it with --reuse ${dataDir} --stages <more>)`);
  }
  if (failed) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
