/*
 * The synthetic text of the scale benchmarks (deterministic: every run builds the same KB):
 * Zipf-distributed pronounceable pseudo-words, resources of `per` paragraphs with one label each,
 * and queries of mid-frequency words.
 */

/** Deterministic PRNG (LCG), so every run builds the same KB. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vo',
  'zi',
  'be',
  'do',
  'fa',
  'gu',
  'hi',
  'jo',
  'pe',
  'qua',
  'se',
  'ti',
  'wu',
  'xa',
  'yo',
  'an',
  'or',
  'el',
];

/** A vocabulary of pronounceable pseudo-words and a Zipf (s = 1.1) sampler over it. */
function vocabulary(size: number): { words: string[]; sample: (rnd: () => number) => string } {
  const rnd = prng(7);
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
    words.add(w);
  }
  const list = [...words];
  const cdf: number[] = [];
  let total = 0;
  for (let i = 0; i < list.length; i++) cdf.push((total += 1 / Math.pow(i + 1, 1.1)));
  const sample = (r: () => number): string => {
    const x = r() * total;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return list[lo] as string;
  };
  return { words: list, sample };
}

export const VOCAB = vocabulary(30_000);

/** The `per` paragraphs (30–70 words each) of resource `i` of the synthetic KB, and the PRNG that made them. */
export function resourceParagraphs(i: number, per: number): { paragraphs: string[]; rnd: () => number } {
  const rnd = prng(1_000_003 + i);
  const paragraphs: string[] = [];
  for (let p = 0; p < per; p++) {
    const n = 30 + Math.floor(rnd() * 40);
    const words: string[] = [];
    for (let w = 0; w < n; w++) words.push(VOCAB.sample(rnd));
    paragraphs.push(`${words.join(' ')}.`);
  }
  return { paragraphs, rnd };
}

/** Resource `i` of the synthetic KB: `per` paragraphs of 30–70 words, one label. */
export function resourceBody(i: number, per: number, labels: number): Record<string, unknown> {
  const { paragraphs, rnd } = resourceParagraphs(i, per);
  return {
    slug: `doc-${i}`,
    title: `Document ${i} ${VOCAB.sample(rnd)}`,
    usermetadata: { classifications: [{ labelset: 'topic', label: `t${i % labels}` }] },
    texts: { body: { body: paragraphs.join('\n\n'), format: 'PLAIN' } },
  };
}

/** Queries of two or three mid-frequency words (ranks 20–1,000): selective enough to rank, common enough to match. */
export function queries(n: number): string[] {
  const rnd = prng(99);
  return Array.from({ length: n }, () => {
    const k = 2 + Math.floor(rnd() * 2);
    return Array.from({ length: k }, () => VOCAB.words[20 + Math.floor(rnd() * 980)] as string).join(' ');
  });
}
