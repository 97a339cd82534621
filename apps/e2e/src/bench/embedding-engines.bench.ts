import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
// eslint-disable-next-line @nx/enforce-module-boundaries
import type { EmbeddingEngine, UseLitePool } from '@kb/understanding';
import { REPO_ROOT } from '../support/processes';
import { percentile, readCorpus, readQueries } from './ir-metrics';
import { datasetDir } from './retrieval.bench';

/**
 * The built-in model's two engines (EMBEDDING_ENGINE: onnx, tfjs) side by side in one process,
 * through the worker pool the service uses (`npm run bench -- embedding-engines [--rounds 3]
 * [--queries 150] [--abstracts 96] [--docs-per-set 800]`):
 *
 * - equality: the documents of the four benchmark data sets (title + text, the embedder's first
 *   2,000 characters; `--docs-per-set` of each) and all their queries, through both engines in
 *   calls of 8: the largest difference of a component and the smallest cosine; then each query's
 *   top 10 documents of its set by dot product, from each engine's vectors (rankings that differ);
 * - a query: one short text at a time on a warm one-worker pool (ms, wall);
 * - processing: SciFact abstracts cut to 1,500 characters in calls of 8 on a one-worker pool, CPU
 *   of the whole process (every thread) per abstract.
 * The timings alternate engine by engine within each round, so both meet the same moments of a
 * shared machine. Data sets are read from $BENCH_DATA (or ../shared/bench-data), never copied.
 */
const SETS = ['scifact', 'msmarco-trecdl-subset', 'hotpotqa-53', 'arcd-subset'];
const ENGINES: EmbeddingEngine[] = ['tfjs', 'onnx'];
const MAX_CHARS = 2000;

async function embedAll(pool: UseLitePool, texts: string[]): Promise<number[][]> {
  const calls: Promise<number[][]>[] = [];
  for (let i = 0; i < texts.length; i += 8) calls.push(pool.embed(texts.slice(i, i + 8)));
  return (await Promise.all(calls)).flat();
}

/** A set's queries: `queries.jsonl`, or SciFact's dev split. */
const queriesOf = (dir: string): string[] =>
  readQueries(existsSync(join(dir, 'queries.jsonl')) ? join(dir, 'queries.jsonl') : join(dir, 'queries.dev.jsonl')).map((q) => q.text);

const dot = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

async function main(): Promise<void> {
  // Loaded here, as the other benchmarks load the understanding library (it is lazy-loaded).
  // eslint-disable-next-line @nx/enforce-module-boundaries
  const { UseLitePool: Pool } = await import('@kb/understanding');
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      queries: { type: 'string', default: '150' },
      abstracts: { type: 'string', default: '96' },
      'docs-per-set': { type: 'string', default: '800' },
    },
  });
  const rounds = Number(values.rounds);
  const docsPerSet = Number(values['docs-per-set']);

  // Equality on the data sets, both engines on two workers each.
  const equality: Record<string, unknown>[] = [];
  const wide = Object.fromEntries(ENGINES.map((e) => [e, new Pool({ workers: 2, engine: e })])) as Record<EmbeddingEngine, UseLitePool>;
  let maxDiff = 0;
  let minCosine = 1;
  let texts = 0;
  for (const set of SETS) {
    const dir = datasetDir(set);
    const docs = readCorpus(join(dir, 'corpus.jsonl'), docsPerSet).map((d) => `${d.title}\n\n${d.text}`.slice(0, MAX_CHARS));
    const queries = queriesOf(dir);
    const vectors: Record<string, { docs: number[][]; queries: number[][] }> = {};
    for (const engine of ENGINES) {
      vectors[engine] = { docs: await embedAll(wide[engine], docs), queries: await embedAll(wide[engine], queries) };
    }
    const a = vectors['tfjs'] as { docs: number[][]; queries: number[][] };
    const b = vectors['onnx'] as { docs: number[][]; queries: number[][] };
    let setDiff = 0;
    let setCosine = 1;
    for (const [x, y] of [...a.docs.map((v, i) => [v, b.docs[i]]), ...a.queries.map((v, i) => [v, b.queries[i]])] as [
      number[],
      number[],
    ][]) {
      for (let k = 0; k < x.length; k++) setDiff = Math.max(setDiff, Math.abs((x[k] as number) - (y[k] as number)));
      setCosine = Math.min(setCosine, dot(x, y) / Math.sqrt(dot(x, x) * dot(y, y)));
    }
    const top = (q: number[], d: number[][]): string =>
      d
        .map((v, i) => [dot(q, v), i] as const)
        .sort((p, r) => r[0] - p[0])
        .slice(0, 10)
        .map(([, i]) => i)
        .join(',');
    const differing = a.queries.filter((q, i) => top(q, a.docs) !== top(b.queries[i] as number[], b.docs)).length;
    equality.push({
      set,
      docs: docs.length,
      queries: queries.length,
      max_abs_diff: setDiff,
      min_cosine: setCosine,
      top10_rankings_differing: differing,
    });
    maxDiff = Math.max(maxDiff, setDiff);
    minCosine = Math.min(minCosine, setCosine);
    texts += docs.length + queries.length;
  }
  await Promise.all(ENGINES.map((e) => wide[e].close()));
  console.table(equality);

  // Timings: one worker per engine, warm, alternating.
  const pools = Object.fromEntries(ENGINES.map((e) => [e, new Pool({ workers: 1, engine: e })])) as Record<EmbeddingEngine, UseLitePool>;
  const scifact = datasetDir('scifact');
  const queries = SETS.flatMap((s) => queriesOf(datasetDir(s))).slice(0, Number(values.queries));
  const abstracts = readCorpus(join(scifact, 'corpus.jsonl'))
    .map((d) => `${d.title}\n\n${d.text}`)
    .filter((t) => t.length >= 1500)
    .slice(0, Number(values.abstracts))
    .map((t) => t.slice(0, 1500));
  for (const e of ENGINES) await pools[e].embed(abstracts.slice(0, 8));
  const timings: Record<string, unknown>[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const engine of ENGINES) {
      const ms: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        await pools[engine].embed([q], { query: true });
        ms.push(performance.now() - t);
      }
      const cpu = process.cpuUsage();
      for (let i = 0; i < abstracts.length; i += 8) await pools[engine].embed(abstracts.slice(i, i + 8));
      const used = process.cpuUsage(cpu);
      timings.push({
        round,
        engine,
        query_ms_p50: percentile(ms, 50),
        query_ms_mean: ms.reduce((s, x) => s + x, 0) / ms.length,
        abstract_cpu_ms: (used.user + used.system) / 1000 / abstracts.length,
      });
    }
  }
  await Promise.all(ENGINES.map((e) => pools[e].close()));
  console.table(timings);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'embedding-engines.json'),
    JSON.stringify({ date: new Date().toISOString(), texts, max_abs_diff: maxDiff, min_cosine: minCosine, equality, timings }, null, 2),
  );
  console.log(`${texts} texts: max |Δ| ${maxDiff.toExponential(2)}, min cosine ${minCosine.toFixed(8)}`);
  if (maxDiff > 1e-4 || minCosine < 0.99999) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
