import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../support/processes';
import { evaluate } from './ir-metrics';
import { cliArgs, datasetFiles, judgedQueries, numberArg, openBenchKb, reusedDataset, type BenchKb } from './retrieval.bench';

/**
 * Fits the built-in reranker's weights (`reranker: "predict"`, search/query/rerank.ts) on a data
 * set's *training* queries: every query's fused candidates (`reranker: "noop"`) are fetched once,
 * then each weight combination reorders them and is scored by nDCG@10. Report the chosen weights'
 * effect on the dev split with the retrieval benchmark (`--reranker predict`), never with this.
 *
 *   npm run bench -- retrieval --dataset scifact --keep               # ingest once
 *   npm run bench -- rerank-tune --reuse <dir> [--split train] [--window 50]
 */
interface LexicalFeatures {
  coverage: number;
  proximity: number;
  order: number;
}
type LexicalWeights = LexicalFeatures;

/**
 * The service's own feature code, from the build (a benchmark may not import the content service's
 * library; this tool measures that code, so it loads the compiled module at run time).
 */
const { lexicalFeatures, rerankScore } = require(join(REPO_ROOT, 'dist', 'libs', 'content', 'src', 'search', 'query', 'rerank.js')) as {
  lexicalFeatures(query: string, text: string, language: string): LexicalFeatures;
  rerankScore(score: number, best: number, f: LexicalFeatures, w: LexicalWeights): number;
};

interface Candidate {
  doc: string | undefined;
  score: number;
  features: LexicalFeatures;
}

interface FindParagraph {
  score: number;
  text?: string;
}

interface FindBody {
  best_matches: string[];
  resources: Record<string, { slug?: string; fields: Record<string, { paragraphs?: Record<string, FindParagraph> }> }>;
}

async function candidatesOf(kb: BenchKb, query: string, window: number): Promise<Candidate[]> {
  const res = await fetch(`${kb.http.baseUrl}/api/v1/kb/${kb.kbid}/find`, {
    method: 'POST',
    headers: { [kb.credential.header]: kb.credential.value, 'content-type': 'application/json' },
    body: JSON.stringify({ query, top_k: window, reranker: 'noop' }),
  });
  if (res.status !== 200) throw new Error(`/find answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const body = (await res.json()) as FindBody;
  const paragraphs = new Map<string, FindParagraph>();
  for (const r of Object.values(body.resources))
    for (const f of Object.values(r.fields)) for (const [id, p] of Object.entries(f.paragraphs ?? {})) paragraphs.set(id, p);
  return body.best_matches.map((id) => {
    const p = paragraphs.get(id);
    const rid = id.split('/')[0] as string;
    return { doc: kb.docIdOf(rid, body.resources[rid]?.slug), score: p?.score ?? 0, features: lexicalFeatures(query, p?.text ?? '', 'en') };
  });
}

/** Documents in the order of their best paragraph after reranking with `w`. */
function ranking(candidates: Candidate[], w: LexicalWeights | undefined): string[] {
  const top = Math.max(...candidates.map((c) => c.score), 0);
  const scored = candidates.map((c, i) => ({ c, i, s: w ? rerankScore(c.score, top, c.features, w) : -i }));
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  const docs: string[] = [];
  for (const { c } of scored) if (c.doc && !docs.includes(c.doc)) docs.push(c.doc);
  return docs;
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: { reuse: { type: 'string' }, split: { type: 'string', default: 'train' }, window: { type: 'string', default: '50' } },
  });
  if (!a.reuse) throw new Error('--reuse <dir of a kept retrieval ingestion> is required');
  const dataset = reusedDataset(a.reuse);
  const window = numberArg('window', a.window) ?? 50;
  const kb = await openBenchKb({ dataset, reuse: a.reuse, keep: true, docMode: 'title-in-body', concurrency: 1, waitTimeoutS: 600 });
  try {
    const files = datasetFiles(dataset, a.split);
    const { queries, qrels } = judgedQueries(files, new Set(Object.values(kb.manifest.slugs)));
    console.log(`${dataset} ${a.split}: ${queries.length} judged queries, window ${window}`);
    const all = new Map<string, Candidate[]>();
    for (const q of queries) all.set(q._id, await candidatesOf(kb, q.text, window));
    const score = (w: LexicalWeights | undefined) =>
      evaluate(new Map([...all].map(([id, c]) => [id, ranking(c, w)])), qrels, { ndcg: 10, recall: 100 }).ndcg;
    const baseline = score(undefined);
    const grid: { w: LexicalWeights; ndcg: number }[] = [];
    for (const coverage of [0, 0.05, 0.1, 0.2, 0.3, 0.5]) {
      for (const proximity of [0, 0.05, 0.1, 0.2, 0.3]) {
        for (const order of [0, 0.05, 0.1, 0.2, 0.3])
          grid.push({ w: { coverage, proximity, order }, ndcg: score({ coverage, proximity, order }) });
      }
    }
    grid.sort((x, y) => y.ndcg - x.ndcg);
    console.log(`fused order (noop): nDCG@10 ${baseline.toFixed(4)}`);
    console.log('| coverage | proximity | order | nDCG@10 |\n|---|---|---|---|');
    for (const g of grid.slice(0, 10)) console.log(`| ${g.w.coverage} | ${g.w.proximity} | ${g.w.order} | ${g.ndcg.toFixed(4)} |`);
  } finally {
    await kb.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
