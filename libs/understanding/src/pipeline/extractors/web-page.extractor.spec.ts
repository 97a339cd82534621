import { extractFile } from './extract-file';
import { ExtractionError } from './extraction.error';
import { paragraphTexts } from './fixtures.testing';
import { extractWebPage } from './web-page.extractor';
import { xpathToCss } from './xpath-to-css';

const filler = 'The knowledge box stores resources and indexes their paragraphs for search. '.repeat(6);
const page = `<!doctype html><html lang="en-GB"><head>
<title>Indexing guide</title>
<meta name="description" content="How indexing works">
<meta property="og:image" content="/img/cover.png">
<base href="https://docs.example.org/guide/">
</head><body>
<nav><a href="/home">Home</a> <a href="mailto:a@b.c">Mail</a> <a href="javascript:void(0)">JS</a></nav>
<article id="main">
  <h1>Indexing guide</h1>
  <p>${filler}</p>
  <h2>Tables</h2>
  <table><tr><th>Field</th><th>Type</th></tr><tr><td>title</td><td>string</td></tr></table>
  <p class="note">See <a href="details.html#part">details</a> and <a href="https://other.example.com/x">other</a>.</p>
</article>
<footer class="legal"><p>Copyright footer text</p><script>var tracking = 1;</script></footer>
</body></html>`;

describe('extractWebPage', () => {
  it('main content with the title first, metadata, absolute deduplicated links', async () => {
    const doc = await extractWebPage(page, 'https://docs.example.org/guide/start', {});
    const texts = paragraphTexts(doc);
    expect(texts[0]).toBe('Indexing guide');
    expect(doc.paragraphs[0]!.kind).toBe('TITLE');
    expect(texts).toContain(filler.trim());
    expect(texts).toContain('Tables');
    expect(texts).toContain('Field | Type');
    expect(texts).toContain('title | string');
    expect(texts.filter((t) => t === 'Indexing guide')).toHaveLength(1);
    expect(doc.text).not.toContain('tracking');
    expect(doc.text).not.toContain('Copyright footer');
    expect(doc.paragraphs.find((p) => doc.text.slice(p.start, p.end) === 'title | string')).toMatchObject({
      kind: 'TABLE',
      is_a_table: true,
    });
    expect(doc).toMatchObject({
      title: 'Indexing guide',
      description: 'How indexing works',
      language: 'en',
      image: 'https://docs.example.org/img/cover.png',
    });
    expect(doc.links).toEqual([
      'https://docs.example.org/home',
      'https://docs.example.org/guide/details.html',
      'https://other.example.com/x',
    ]);
  });

  it('css_selector and xpath pick the part of the page asked for', async () => {
    const byCss = await extractWebPage(page, 'https://docs.example.org/', { css_selector: 'footer.legal' });
    expect(paragraphTexts(byCss)).toEqual(['Indexing guide', 'Copyright footer text']);
    const byXpath = await extractWebPage(page, 'https://docs.example.org/', { xpath: "//p[@class='note']" });
    expect(paragraphTexts(byXpath)).toEqual(['Indexing guide', 'See details and other.']);
    await expect(extractWebPage(page, 'https://x.y/', { xpath: '//p[last()]' })).rejects.toMatchObject({ code: 'INVALID_SELECTOR' });
    await expect(extractWebPage(page, 'https://x.y/', { css_selector: 'p[[' })).rejects.toBeInstanceOf(ExtractionError);
  });

  it('translates the supported XPath subset', () => {
    expect(xpathToCss('/html/body/div[2]/p')).toBe('html > body > div:nth-of-type(2) > p');
    expect(xpathToCss('//*[@id="main"]//a[starts-with(@href,"/doc")]/text()')).toBe('*[id="main"] a[href^="/doc"]');
    expect(xpathToCss("//div[contains(@class,'x')][@data-a]")).toBe('div[class*="x"][data-a]');
  });

  it('uploaded HTML files: body text when there is no article, relative links dropped', async () => {
    const doc = await extractFile(
      Buffer.from('<html><body><h2>Hi</h2><p>One<br>Two</p><a href="rel.html">r</a><a href="https://a.b/c">c</a></body></html>'),
      { filename: 'x.html' },
    );
    expect(paragraphTexts(doc)).toEqual(['Hi', 'One\nTwo', 'rc']);
    expect(doc.links).toEqual(['https://a.b/c']);
  });
});
