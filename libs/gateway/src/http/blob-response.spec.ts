import { mayBeInline, parseRange } from './blob-response';

describe('parseRange', () => {
  it.each([
    ['bytes=2-6', { start: 2, end: 6 }],
    ['bytes=5-', { start: 5 }],
    ['bytes=-4', { start: -4 }],
    [' bytes=0-0 ', { start: 0, end: 0 }],
    ['bytes=-', undefined],
    ['bytes=1-2,4-5', undefined],
    ['items=1-2', undefined],
    [undefined, undefined],
  ])('%s → %j', (header, range) => {
    expect(parseRange(header)).toEqual(range);
  });
});

describe('mayBeInline', () => {
  it.each([
    ['text/html', false],
    ['text/html; charset=utf-8', false],
    ['application/xhtml+xml', false],
    ['image/svg+xml', false],
    ['text/xml', false],
    ['application/xml', false],
    ['application/rss+xml', false],
    ['text/javascript', false],
    ['application/javascript', false],
    ['multipart/x-mixed-replace', false],
    ['', false],
    ['application/pdf', true],
    ['image/png', true],
    ['text/plain', true],
    ['video/mp4', true],
  ])('%s → %s', (type, inline) => {
    expect(mayBeInline(type)).toBe(inline);
  });
});
