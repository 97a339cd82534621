import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile } from './ir-metrics';
import { cliArgs, datasetDir, numberArg, openBenchKb } from './retrieval.bench';

/**
 * Answer quality of `/ask` on a HotpotQA-style set (`qa.jsonl`: question, answer), through the
 * public API of the standalone service with the KB's configured generator (the built-in extractive
 * one by default):
 *
 *   npm run bench -- answer-quality [--dataset hotpotqa-53] [--keep | --reuse <dir>] [--top-k 10]
 *     [--strategies hierarchy,neighbouring_paragraphs]
 *
 * Prints exact match and token F1 (SQuAD normalisation), the share of answers containing the gold
 * answer, groundedness (answer sentences supported by a paragraph they cite), and latencies.
 */

interface QaItem {
  _id: string;
  question: string;
  answer: string;
}

interface SyncAsk {
  answer: string;
  status: string;
  citations: Record<string, [number, number][]>;
  retrieval_results?: { resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { text: string }> }> }> };
}

/** SQuAD answer normalisation: lowercase, no punctuation, no articles, single spaces. */
export function normaliseAnswer(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function tokenF1(prediction: string, gold: string): number {
  const p = normaliseAnswer(prediction).split(' ').filter(Boolean);
  const g = normaliseAnswer(gold).split(' ').filter(Boolean);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const n = counts.get(t) ?? 0;
    if (n > 0) {
      common++;
      counts.set(t, n - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

const words = (s: string) =>
  normaliseAnswer(s)
    .split(' ')
    .filter((w) => w.length > 2);

/** Share of answer sentences that a paragraph they cite supports (verbatim, or ≥ 80 % of its words). */
export function citedGroundedness(answer: string, citations: Record<string, [number, number][]>, texts: Map<string, string>): number {
  const sentences: { start: number; end: number }[] = [];
  const re = /[^.!?]+[.!?]*/g;
  for (let m = re.exec(answer); m; m = re.exec(answer)) if (m[0].trim()) sentences.push({ start: m.index, end: m.index + m[0].length });
  if (sentences.length === 0) return 1;
  let supported = 0;
  for (const s of sentences) {
    const text = answer.slice(s.start, s.end).trim();
    const citing = Object.entries(citations)
      .filter(([, spans]) => spans.some(([a, b]) => a < s.end && b > s.start))
      .map(([k]) => texts.get(k) ?? '');
    const ok = citing.some((p) => {
      if (p.includes(text)) return true;
      const pw = new Set(words(p));
      const sw = words(text);
      return sw.length > 0 && sw.filter((w) => pw.has(w)).length / sw.length >= 0.8;
    });
    if (ok) supported++;
  }
  return supported / sentences.length;
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      dataset: { type: 'string', default: 'hotpotqa-53' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
      'top-k': { type: 'string', default: '10' },
      strategies: { type: 'string', default: '' },
      concurrency: { type: 'string', default: '8' },
    },
  });
  const qa = readFileSync(join(datasetDir(a.dataset), 'qa.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as QaItem);
  const kb = await openBenchKb({
    dataset: a.dataset,
    reuse: a.reuse,
    keep: a.keep || !!a.reuse,
    docMode: 'separate',
    concurrency: numberArg('concurrency', a.concurrency) ?? 8,
    waitTimeoutS: 3600,
  });
  try {
    const strategies = a.strategies ? a.strategies.split(',').map((name) => ({ name })) : [];
    const f1s: number[] = [];
    const ems: number[] = [];
    const contains: number[] = [];
    const grounded: number[] = [];
    const ms: number[] = [];
    let errors = 0;
    for (const item of qa) {
      const t0 = performance.now();
      const res = await kb.http.call<SyncAsk>('POST', `/api/v1/kb/${kb.kbid}/ask`, {
        credential: kb.credential,
        headers: { 'x-synchronous': 'true' },
        body: {
          query: item.question,
          top_k: numberArg('top-k', a['top-k']) ?? 10,
          ...(strategies.length ? { rag_strategies: strategies } : {}),
        },
      });
      ms.push(performance.now() - t0);
      if (res.status !== 200 || res.body.status === 'error') {
        errors++;
        continue;
      }
      const answer = res.body.answer ?? '';
      f1s.push(tokenF1(answer, item.answer));
      ems.push(normaliseAnswer(answer) === normaliseAnswer(item.answer) ? 1 : 0);
      contains.push(normaliseAnswer(answer).includes(normaliseAnswer(item.answer)) ? 1 : 0);
      const texts = new Map<string, string>();
      for (const r of Object.values(res.body.retrieval_results?.resources ?? {}))
        for (const f of Object.values(r.fields)) for (const [id, p] of Object.entries(f.paragraphs)) texts.set(id, p.text);
      grounded.push(citedGroundedness(answer, res.body.citations ?? {}, texts));
    }
    const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
    console.log(`\n/ask on ${a.dataset} (${qa.length} questions, generator: KB default, strategies: ${a.strategies || 'none'})\n`);
    console.log('| EM | token F1 | answer contains gold | groundedness | p50 ms | p95 ms | errors |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(
      `| ${mean(ems).toFixed(3)} | ${mean(f1s).toFixed(3)} | ${mean(contains).toFixed(3)} | ${(100 * mean(grounded)).toFixed(1)} % | ${percentile(ms, 50).toFixed(0)} | ${percentile(ms, 95).toFixed(0)} | ${errors} |`,
    );
  } finally {
    await kb.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
