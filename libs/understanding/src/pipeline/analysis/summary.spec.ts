import { splitSentences } from '../split';
import { extractiveSummary } from './summary';

const ARTICLE = [
  'Solar power is now the cheapest source of new electricity in most countries.',
  'The cost of solar panels fell by ninety percent over the last decade.',
  'My neighbour painted his fence green last weekend.',
  'Cheaper panels and better batteries make solar power attractive for homes and for utilities.',
  'Some critics say solar power still depends on subsidies in a few countries.',
  'Thanks for reading.',
].join(' ');
const spans = splitSentences(ARTICLE, 0, ARTICLE.length);
const sentence = (i: number): string => ARTICLE.slice(spans[i]!.start, spans[i]!.end);

describe('extractiveSummary', () => {
  it('picks the central sentences, in document order, leaving out the off-topic ones', () => {
    const summary = extractiveSummary(ARTICLE, spans);
    expect(summary.spans).toHaveLength(3);
    expect(summary.text).toContain(sentence(0));
    expect(summary.text).not.toContain(sentence(2));
    expect(summary.text).not.toContain(sentence(5));
    const starts = summary.spans.map((s) => s.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(summary.text).toBe(summary.spans.map((s) => ARTICLE.slice(s.start, s.end)).join(' '));
  });

  it('is deterministic', () => {
    expect(extractiveSummary(ARTICLE, spans)).toEqual(extractiveSummary(ARTICLE, spans));
  });

  it.each([
    [{ maxSentences: 1 }, 1, 600],
    [{ maxSentences: 5, maxChars: 160 }, 2, 160],
    [{ maxSentences: 10, maxChars: 10_000 }, 6, 10_000],
  ])('respects limits %j', (options, maxCount, maxChars) => {
    const summary = extractiveSummary(ARTICLE, spans, options);
    expect(summary.spans.length).toBeGreaterThan(0);
    expect(summary.spans.length).toBeLessThanOrEqual(maxCount);
    expect(summary.text.length).toBeLessThanOrEqual(maxChars);
  });

  it('cuts a single overlong sentence at a word boundary', () => {
    const text = `${'word '.repeat(200).trim()}.`;
    const summary = extractiveSummary(text, [{ start: 0, end: text.length }], { maxChars: 50 });
    expect(summary.text.length).toBeLessThanOrEqual(50);
    expect(summary.text.endsWith('word…')).toBe(true);
    expect(text.slice(summary.spans[0]!.start, summary.spans[0]!.end)).toBe(summary.text.slice(0, -1));
  });

  it('leaves out a repeated sentence', () => {
    const text = 'Rates went up again. Rates went up again! Inflation worries the bank. The bank raised rates.';
    const s = splitSentences(text, 0, text.length);
    const summary = extractiveSummary(text, s);
    expect(summary.text.match(/Rates went up again/g)).toHaveLength(1);
  });

  it('is empty without sentences', () => {
    expect(extractiveSummary('', [])).toEqual({ text: '', spans: [] });
  });
});
