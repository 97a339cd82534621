import { extractText } from './extract-text';
import { splitParagraphs, splitSentences } from './split';

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
    expect(splitSentences(text, 0, text.length).map((s) => text.slice(s.start, s.end))).toEqual(['今日は晴れ。', '明日は雨。', 'هل هذا صحيح؟', 'نعم']);
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
