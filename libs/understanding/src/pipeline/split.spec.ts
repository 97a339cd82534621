import { extractText } from './extract-text';
import { chunkSpans, splitParagraphs, splitSentences } from './split';

describe('splitParagraphs', () => {
  it('splits on blank lines with offsets into the text', () => {
    const text = 'First one. Second one!\n\n  Next paragraph here?  \n\n\nLast';
    const paragraphs = splitParagraphs(text);
    expect(paragraphs.map((p) => text.slice(p.start, p.end))).toEqual(['First one. Second one!', 'Next paragraph here?', 'Last']);
    expect(paragraphs[0]?.sentences.map((s) => text.slice(s.start, s.end))).toEqual(['First one.', 'Second one!']);
  });

  it('returns nothing for blank text', () => {
    expect(splitParagraphs('  \n\n ')).toEqual([]);
  });

  it('handles CJK and Arabic sentence ends', () => {
    const text = '今日は晴れ。 明日は雨。 هل هذا صحيح؟ نعم';
    expect(splitSentences(text, 0, text.length).map((s) => text.slice(s.start, s.end))).toEqual([
      '今日は晴れ。',
      '明日は雨。',
      'هل هذا صحيح؟',
      'نعم',
    ]);
  });
});

describe('extractText', () => {
  it.each([
    ['PLAIN', 'a <b>x</b>', 'a <b>x</b>'],
    ['HTML', '<p>Hello &amp; <b>world</b></p><p>Two</p><script>x()</script>', 'Hello & world\n\nTwo'],
    ['MARKDOWN', '# Title\n\nSome **bold** [link](http://x)', 'Title\n\nSome bold link'],
    ['KEEP_MARKDOWN', '# Title', '# Title'],
    ['JSON', '{"a":1}', '{\n  "a": 1\n}'],
  ] as const)('%s', (format, body, expected) => {
    expect(extractText(body, format)).toBe(expected);
  });
});

describe('chunkSpans (split strategies)', () => {
  const text = Array.from({ length: 12 }, (_, i) => `Sentence ${i + 1} is about the tides of the sea.`).join(' ');
  const whole = [{ start: 0, end: text.length, kind: 'TEXT' }];

  it('keeps spans that fit, and cuts longer ones at sentence ends within the size', () => {
    expect(chunkSpans(text, whole, { max: text.length, overlap: 0 })).toEqual(whole);
    const chunks = chunkSpans(text, whole, { max: 100, overlap: 0 });
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(text.length / 100));
    for (const c of chunks) {
      expect(c.end - c.start).toBeLessThanOrEqual(100);
      expect(text.slice(c.start, c.end)).toMatch(/^Sentence \d+ .*\.$/);
      expect(c.kind).toBe('TEXT');
    }
    // Without overlap the chunks cover the text in order, without gaps beyond whitespace.
    for (let i = 1; i < chunks.length; i++) expect(text.slice(chunks[i - 1]!.end, chunks[i]!.start).trim()).toBe('');
    expect(chunks[0]!.start).toBe(0);
    expect(chunks[chunks.length - 1]!.end).toBe(text.length);
  });

  it('repeats up to `overlap` characters of the chunk before, from a word start', () => {
    const chunks = chunkSpans(text, whole, { max: 100, overlap: 30 });
    for (let i = 1; i < chunks.length; i++) {
      const [prev, cur] = [chunks[i - 1]!, chunks[i]!];
      expect(cur.start).toBeLessThan(prev.end);
      expect(prev.end - cur.start).toBeLessThanOrEqual(30);
      expect(text[cur.start - 1]).toMatch(/\s/);
      expect(cur.end - cur.start).toBeLessThanOrEqual(100);
    }
  });

  it('cuts at word ends, and inside a word only when a word is longer than the size', () => {
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda';
    for (const c of chunkSpans(words, [{ start: 0, end: words.length }], { max: 20, overlap: 0 })) {
      expect(c.end - c.start).toBeLessThanOrEqual(20);
      expect(words.slice(c.start, c.end)).toMatch(/^[a-z]+( [a-z]+)*$/);
    }
    const long = 'x'.repeat(250);
    const cut = chunkSpans(long, [{ start: 0, end: 250 }], { max: 100, overlap: 10 });
    expect(cut.map((c) => c.end - c.start).every((n) => n <= 100)).toBe(true);
    expect(cut[cut.length - 1]!.end).toBe(250);
  });
});
