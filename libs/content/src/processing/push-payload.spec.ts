import { DomainError, PushPayloadDto, validatePayload, type ValidationIssue } from '@kb/contracts';
import { canonicalUuid, pushWriteOf } from './push-payload';

const payload = (extra: Record<string, unknown>): PushPayloadDto =>
  validatePayload(PushPayloadDto, { kbid: 'kb-1', ...extra }, { loc: ['body'] });

function issuesOf(work: () => unknown): ValidationIssue[] {
  try {
    work();
  } catch (err) {
    if (err instanceof DomainError) return (err.details?.['detail'] as ValidationIssue[]) ?? [];
    throw err;
  }
  throw new Error('expected a validation error');
}

describe('pushWriteOf (Send Data To Process → the content write body)', () => {
  it('maps text, link and conversation fields, and takes title and summary from the generic fields', () => {
    const { body, fieldCount } = pushWriteOf(
      payload({
        genericfield: { title: { body: 'Tides' }, summary: { body: 'Why the sea rises.' } },
        textfield: { body: { body: 'The moon pulls.', format: 'MARKDOWN' }, plain: { body: 'x' } },
        linkfield: { page: { link: 'https://example.com/tides', css_selector: 'main', headers: { 'x-a': '1' } } },
        conversationfield: {
          chat: {
            messages: [
              { ident: 'm1', who: 'ann', content: { text: 'Hi', format: 'MARKDOWN' } },
              { ident: 'm2', content: {} },
            ],
          },
        },
        processing_options: { ml_text: false, extract_strategy: 'fast' },
      }),
    );
    expect(fieldCount).toBe(4);
    expect(body).toEqual({
      title: 'Tides',
      summary: 'Why the sea rises.',
      texts: {
        body: { body: 'The moon pulls.', format: 'MARKDOWN', extract_strategy: 'fast' },
        plain: { body: 'x', format: 'PLAIN', extract_strategy: 'fast' },
      },
      links: { page: { uri: 'https://example.com/tides', css_selector: 'main', headers: { 'x-a': '1' }, extract_strategy: 'fast' } },
      conversations: {
        chat: {
          messages: [
            { ident: 'm1', who: 'ann', content: { text: 'Hi', format: 'MARKDOWN' } },
            { ident: 'm2', content: { text: '', format: 'PLAIN' } },
          ],
          extract_strategy: 'fast',
        },
      },
      processing_options: { ml_text: false },
    });
  });

  it("prefers the explicit title over the generic one and keeps a field's own strategy", () => {
    const { body } = pushWriteOf(
      payload({
        title: 'Explicit',
        genericfield: { title: { body: 'Generic' } },
        textfield: { a: { body: 'x', extract_strategy: 'own' } },
        processing_options: { extract_strategy: 'all' },
      }),
    );
    expect(body.title).toBe('Explicit');
    expect(body.texts?.['a']?.extract_strategy).toBe('own');
    expect(body.summary).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, (string | number)[]]>([
    [
      'a file token (no upload endpoint yet)',
      { filefield: { doc: 'token' }, textfield: { a: { body: 'x' } } },
      ['body', 'filefield', 'doc'],
    ],
    ['a layout field', { layoutfield: { l: {} }, textfield: { a: { body: 'x' } } }, ['body', 'layoutfield']],
    [
      'a generic field other than title and summary',
      { genericfield: { other: { body: 'x' } }, textfield: { a: { body: 'x' } } },
      ['body', 'genericfield', 'other'],
    ],
    [
      'an attachment token',
      { conversationfield: { c: { messages: [{ ident: 'm', content: { text: 'x', attachments: ['t'] } }] } } },
      ['body', 'conversationfield', 'c', 'messages', 0, 'content', 'attachments'],
    ],
    [
      'a generic title longer than a title',
      { genericfield: { title: { body: 'x'.repeat(2049) } }, textfield: { a: { body: 'x' } } },
      ['body', 'genericfield', 'title', 'body'],
    ],
    ['nothing to process', { title: 'Only a title', genericfield: { title: { body: 'x' } } }, ['body']],
  ])('refuses %s with a 422 located in the body', (_name, extra, loc) => {
    expect(issuesOf(() => pushWriteOf(payload(extra)))).toEqual([expect.objectContaining({ loc })]);
  });

  it('reports every refused member at once', () => {
    const issues = issuesOf(() => pushWriteOf(payload({ filefield: { a: 't', b: 't' }, layoutfield: { l: {} } })));
    expect(issues.map((i) => i.loc.join('.'))).toEqual(['body.filefield.a', 'body.filefield.b', 'body.layoutfield']);
  });

  it('accepts empty objects and nulls for the members it does not use', () => {
    expect(
      pushWriteOf(
        payload({ uuid: null, slug: null, title: null, source: null, filefield: {}, layoutfield: {}, textfield: { a: { body: 'x' } } }),
      ).fieldCount,
    ).toBe(1);
  });
});

describe('PushPayloadDto validation', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['missing kbid', { kbid: undefined }, 'body.kbid'],
    ['a uuid that is not one', { uuid: 'r-1' }, 'body.uuid'],
    ['a bad slug', { slug: 'no spaces' }, 'body.slug'],
    ['a bad text format', { textfield: { a: { body: 'x', format: 'DOCX' } } }, 'body.textfield.a.format'],
    ['a bad field id', { textfield: { 'a b': { body: 'x' } } }, 'body.textfield.a b'],
    ['a link that is not a URL', { linkfield: { a: { link: 'not a url' } } }, 'body.linkfield.a.link'],
    ['labels that are not strings', { labels: [1] }, 'body.labels'],
    ['a webhook without uri', { webhook_config: { headers: {} } }, 'body.webhook_config.uri'],
  ])('refuses %s', (_name, extra, loc) => {
    const issues = issuesOf(() => validatePayload(PushPayloadDto, { kbid: 'kb-1', ...extra }, { loc: ['body'] }));
    expect(issues.map((i) => i.loc.join('.'))).toContain(loc);
  });
});

describe('canonicalUuid', () => {
  it("turns the reference clients' dashless hex ids into the dashed lower-case form", () => {
    expect(canonicalUuid('0F3C2A9E5B7D4E1F8A6B2C4D6E8F0A1B')).toBe('0f3c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b');
    expect(canonicalUuid('0f3c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b')).toBe('0f3c2a9e-5b7d-4e1f-8a6b-2c4d6e8f0a1b');
  });
});
