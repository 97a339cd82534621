import { extractText } from './extract-text';

describe('extractText', () => {
  it('HTML: scripts and styles go with their content, blocks become paragraphs, entities are decoded', () => {
    const html =
      '<h1>Title</h1><script type="x">var a = "<p>no</p>";</script><p>One &amp; two</p><STYLE>p{}</STYLE><div>Three<br/>four</div>';
    expect(extractText(html, 'HTML')).toBe('Title\n\nOne & two\n\nThree\nfour');
  });

  it('HTML: an unclosed <script> or a stray "<" keeps the text after it, only the tags go', () => {
    expect(extractText('<p>a < b</p><script>tail', 'HTML')).toBe('a < b\n\ntail');
  });

  it('Markdown: links and images keep their text, emphasis and headings their words', () => {
    expect(extractText('# Head\n\nSee [the docs](https://x.test/a "t") and ![logo](l.png), **bold**.', 'MARKDOWN')).toBe(
      'Head\n\nSee the docs and logo, bold.',
    );
  });

  // Each of these took minutes with the previous patterns (each unclosed opening rescanned the whole
  // rest of the text); the test's own timeout is the bound, no timing is asserted.
  it.each([
    ['unclosed <script> tags', '<script>'.repeat(250_000), 'HTML'],
    ['unclosed <style> tags', '<style a>'.repeat(200_000), 'HTML'],
    ['stray "<"', '<'.repeat(2_000_000), 'HTML'],
    ['unclosed link texts', '['.repeat(2_000_000), 'MARKDOWN'],
    ['unclosed link addresses', '[a]('.repeat(500_000), 'MARKDOWN'],
  ] as const)('2 MB of %s are converted in linear time', (_, body, format) => {
    expect(typeof extractText(body, format)).toBe('string');
  });
});
