import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// Calibrates the reporting service's own scorer with the built-in model, run by hand: it needs that code, not the API.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { scoreRemiRaw, type EmbedTexts } from '@kb/reporting';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { useLiteWorker } from '@kb/understanding';
import { percentile } from './ir-metrics';
import { normaliseAnswer } from './answer-quality.bench';
import { cliArgs, datasetDir } from './retrieval.bench';

/**
 * Calibration of the offline REMi scorer (docs/remi.md) on a HotpotQA-style set (`qa.jsonl` with
 * its supporting passages, `corpus.jsonl`). No service runs: for every question the benchmark
 * builds a context (its two supporting passages and two random passages of the corpus) and four
 * answers, then scores them as the reporting service would:
 *
 *   right       the supporting sentences that contain the gold answer (the first sentence of each
 *               supporting passage when none does, e.g. yes/no questions), as an extractive
 *               generator would answer;
 *   swapped     the right answer with the gold answer (or its first number or name) replaced by
 *               another question's — deliberately wrong, otherwise word for word supported;
 *   near-topic  the sentence of a passage outside the context that shares most words with the
 *               question — an answer from a passage the retrieval did not return (unsupported);
 *   off-topic   the next question's right answer (unsupported and irrelevant);
 *   short       the gold answer alone ("Chief of Protocol."), as a terse generator would answer;
 *   short-wrong another question's gold answer alone (for yes/no questions the opposite word).
 *
 *   npm run bench -- remi-quality [--dataset hotpotqa-53] [--no-model]
 *
 * Prints per class the answer's groundedness (mean over its sentences) and answer relevance, the
 * AUC of right vs each wrong class and of short vs short-wrong, and the context relevance AUC of supporting passages vs random
 * and near-topic ones — on the 0–5 scores the API returns and on the continuous values behind them.
 */

interface QaItem {
  _id: string;
  question: string;
  answer: string;
  supporting_passages: { _id: string; title: string; text: string }[];
}
interface Doc {
  _id: string;
  title: string;
  text: string;
}

const sentencesOf = (text: string) =>
  text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
const words = (s: string) =>
  new Set(
    normaliseAnswer(s)
      .split(' ')
      .filter((w) => w.length > 2),
  );
const yesNo = (answer: string) => ['yes', 'no'].includes(normaliseAnswer(answer));
const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Probability that a positive scores above a negative (ties count half). */
export function auc(pos: number[], neg: number[]): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  let wins = 0;
  for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (pos.length * neg.length);
}

function rightAnswer(item: QaItem): string {
  const gold = normaliseAnswer(item.answer);
  const sents = item.supporting_passages.flatMap((p) => sentencesOf(p.text));
  const containing = gold && !['yes', 'no'].includes(gold) ? sents.filter((s) => normaliseAnswer(s).includes(gold)) : [];
  if (containing.length > 0) return containing.slice(0, 2).join(' ');
  const firsts = item.supporting_passages
    .map((p) => sentencesOf(p.text)[0] ?? '')
    .filter(Boolean)
    .join(' ');
  return ['yes', 'no'].includes(gold) ? `${gold === 'yes' ? 'Yes' : 'No'}. ${firsts}` : firsts;
}

function swapped(item: QaItem, right: string, others: QaItem[]): string {
  const gold = item.answer.trim();
  const other = others.find(
    (o) =>
      !['yes', 'no'].includes(normaliseAnswer(o.answer)) &&
      normaliseAnswer(o.answer) !== normaliseAnswer(gold) &&
      !right.includes(o.answer),
  );
  if (other && gold && !['yes', 'no'].includes(normaliseAnswer(gold)) && right.includes(gold)) return right.split(gold).join(other.answer);
  const num = /\b\d[\d,]*\b/.exec(right);
  if (num) return right.slice(0, num.index) + String(Number(num[0].replace(/,/g, '')) + 7) + right.slice(num.index + num[0].length);
  // The first capitalised word that does not start a sentence, replaced by another question's answer.
  const name = /(?<![.!?]\s|^)\b[A-Z][a-z]+\b/.exec(right);
  if (name && other) return right.slice(0, name.index) + other.answer + right.slice(name.index + name[0].length);
  return other ? `${right} ${other.answer}.` : right;
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: { dataset: { type: 'string', default: 'hotpotqa-53' }, 'no-model': { type: 'boolean', default: false } },
  });
  const dir = datasetDir(a.dataset);
  const qa = readFileSync(join(dir, 'qa.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as QaItem);
  const corpus = readFileSync(join(dir, 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Doc);
  const worker = a['no-model'] ? null : useLiteWorker();
  const embed: EmbedTexts | undefined = worker ? (texts) => worker.embed(texts, { query: true }) : undefined;
  const t0 = performance.now();
  const classes = ['right', 'swapped', 'near-topic', 'off-topic', 'short', 'short-wrong'] as const;
  const ground: Record<string, number[]> = Object.fromEntries(classes.map((c) => [c, []]));
  const groundScore: Record<string, number[]> = Object.fromEntries(classes.map((c) => [c, []]));
  const answerRel: Record<string, number[]> = Object.fromEntries(classes.map((c) => [c, []]));
  const answerScore: Record<string, number[]> = Object.fromEntries(classes.map((c) => [c, []]));
  const ctx = { supporting: [] as number[], random: [] as number[], near: [] as number[] };
  const ctxScore = { supporting: [] as number[], random: [] as number[], near: [] as number[] };
  const to05 = (x: number) => Math.round(5 * Math.max(0, Math.min(1, x)));
  try {
    for (const [i, item] of qa.entries()) {
      const supporting = new Set(item.supporting_passages.map((p) => p._id));
      const outside = corpus.filter((d) => !supporting.has(d._id));
      const randoms = [outside[(i * 37 + 11) % outside.length], outside[(i * 53 + 29) % outside.length]] as Doc[];
      const qWords = words(item.question);
      const near = outside
        .filter((d) => !randoms.includes(d))
        .map((d) => ({ d, n: [...words(`${d.title} ${d.text}`)].filter((w) => qWords.has(w)).length }))
        .sort((x, y) => y.n - x.n)[0]?.d as Doc;
      const context = [...item.supporting_passages, ...randoms].map((p) => ({ key: p._id, text: `${p.title}. ${p.text}` }));
      const right = rightAnswer(item);
      const others = [...qa.slice(i + 1), ...qa.slice(0, i)];
      const answers: Record<(typeof classes)[number], string> = {
        right,
        swapped: swapped(item, right, others),
        'near-topic':
          sentencesOf(near.text).sort(
            (x, y) => [...words(y)].filter((w) => qWords.has(w)).length - [...words(x)].filter((w) => qWords.has(w)).length,
          )[0] ?? near.text,
        'off-topic': rightAnswer(others[0] as QaItem),
        short: `${item.answer}.`,
        'short-wrong': yesNo(item.answer)
          ? `${normaliseAnswer(item.answer) === 'yes' ? 'No' : 'Yes'}.`
          : `${others.find((o) => !yesNo(o.answer) && normaliseAnswer(o.answer) !== normaliseAnswer(item.answer))?.answer ?? ''}.`,
      };
      for (const c of classes) {
        const raw = await scoreRemiRaw({ question: item.question, answer: answers[c], context }, embed);
        (ground[c] as number[]).push(mean(raw.groundedness));
        (groundScore[c] as number[]).push(mean(raw.groundedness.map(to05)));
        (answerRel[c] as number[]).push(raw.answer.value);
        (answerScore[c] as number[]).push(to05(raw.answer.value));
        if (c === 'right') {
          ctx.supporting.push(...raw.context.slice(0, supporting.size));
          ctx.random.push(...raw.context.slice(supporting.size));
          ctxScore.supporting.push(...raw.context.slice(0, supporting.size).map(to05));
          ctxScore.random.push(...raw.context.slice(supporting.size).map(to05));
        }
      }
      const nearRaw = await scoreRemiRaw(
        { question: item.question, answer: '', context: [{ key: near._id, text: `${near.title}. ${near.text}` }] },
        embed,
      );
      ctx.near.push(...nearRaw.context);
      ctxScore.near.push(...nearRaw.context.map(to05));
    }
  } finally {
    await worker?.terminate();
  }
  const seconds = (performance.now() - t0) / 1000;
  const dist = (xs: number[]) =>
    `${mean(xs).toFixed(2)} (p25 ${percentile(xs, 25).toFixed(2)}, p50 ${percentile(xs, 50).toFixed(2)}, p75 ${percentile(xs, 75).toFixed(2)})`;
  const hist = (xs: number[]) => [0, 1, 2, 3, 4, 5].map((s) => xs.filter((x) => Math.round(x) === s).length).join(' / ');
  console.log(
    `\nREMi offline scorer on ${a.dataset} (${qa.length} questions; model: ${worker ? 'en-use-lite-2024' : 'none, lexical only'}; ${seconds.toFixed(1)} s)\n`,
  );
  console.log('| answer | groundedness 0–5, mean of sentences | answer relevance 0–5 | answer relevance histogram 0/1/2/3/4/5 |');
  console.log('|---|---|---|---|');
  for (const c of classes)
    console.log(
      `| ${c} | ${dist(groundScore[c] as number[])} | ${dist(answerScore[c] as number[])} | ${hist(answerScore[c] as number[])} |`,
    );
  console.log('\n| positives vs negatives | groundedness AUC (0–5 / continuous) | answer relevance AUC (0–5 / continuous) |');
  console.log('|---|---|---|');
  const wrong = ['swapped', 'near-topic', 'off-topic'];
  const rows: [string, string[], string[]][] = [
    ...wrong.map((c): [string, string[], string[]] => [`right vs ${c}`, ['right'], [c]]),
    ['right vs all three', ['right'], wrong],
    ['short vs short-wrong', ['short'], ['short-wrong']],
    ['short vs short-wrong, yes/no questions left out', ['short'], ['short-wrong']],
    ['right + short vs all wrong', ['right', 'short'], [...wrong, 'short-wrong']],
  ];
  for (const [label, pos, neg] of rows) {
    const open = label.includes('yes/no') ? qa.map((q) => !yesNo(q.answer)) : qa.map(() => true);
    const pick = (m: Record<string, number[]>, cs: string[]) => cs.flatMap((c) => (m[c] as number[]).filter((_, i) => open[i]));
    console.log(
      `| ${label} | ${auc(pick(groundScore, pos), pick(groundScore, neg)).toFixed(3)} / ${auc(pick(ground, pos), pick(ground, neg)).toFixed(3)} | ` +
        `${auc(pick(answerScore, pos), pick(answerScore, neg)).toFixed(3)} / ${auc(pick(answerRel, pos), pick(answerRel, neg)).toFixed(3)} |`,
    );
  }
  console.log('\n| context piece | context relevance 0–5 | histogram 0/1/2/3/4/5 | AUC vs supporting (0–5 / continuous) |');
  console.log('|---|---|---|---|');
  console.log(`| supporting | ${dist(ctxScore.supporting)} | ${hist(ctxScore.supporting)} | |`);
  console.log(
    `| random | ${dist(ctxScore.random)} | ${hist(ctxScore.random)} | ${auc(ctxScore.supporting, ctxScore.random).toFixed(3)} / ${auc(ctx.supporting, ctx.random).toFixed(3)} |`,
  );
  console.log(
    `| near-topic | ${dist(ctxScore.near)} | ${hist(ctxScore.near)} | ${auc(ctxScore.supporting, ctxScore.near).toFixed(3)} / ${auc(ctx.supporting, ctx.near).toFixed(3)} |`,
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
