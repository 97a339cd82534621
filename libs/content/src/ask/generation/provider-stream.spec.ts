import { SseParser, endpointUrl, kindOfStatus, retryAfterSeconds, type SseMessage } from './provider-stream';

/** Feeds `text` to a parser in pieces of `size` characters. */
function parse(text: string, size: number): SseMessage[] {
  const parser = new SseParser();
  const out: SseMessage[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...parser.push(text.slice(i, i + size)));
  return [...out, ...parser.end()];
}

describe('SseParser', () => {
  const stream =
    ': comment\n' +
    'data: {"a":1}\n\n' +
    'event: content_block_delta\r\ndata: {"b":2}\r\n\r\n' +
    'data:no-space\rdata: second line\r\r' +
    'id: 7\nretry: 100\nevent: ping\n\n' +
    'data: [DONE]';
  const expected: SseMessage[] = [
    { event: 'message', data: '{"a":1}' },
    { event: 'content_block_delta', data: '{"b":2}' },
    { event: 'message', data: 'no-space\nsecond line' },
    { event: 'message', data: '[DONE]' },
  ];

  it.each([1, 2, 3, 5, 1000])('parses LF, CRLF and CR streams fed %i characters at a time', (size) => {
    expect(parse(stream, size)).toEqual(expected);
  });
});

describe('provider responses', () => {
  it.each([
    [401, 'auth'],
    [403, 'auth'],
    [408, 'timeout'],
    [429, 'rate_limited'],
    [529, 'rate_limited'],
    [400, 'bad_request'],
    [404, 'bad_request'],
    [500, 'provider'],
    [502, 'provider'],
  ] as const)('maps status %i to %s', (status, kind) => {
    expect(kindOfStatus(status)).toBe(kind);
  });

  it('reads Retry-After as seconds, milliseconds or a date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterSeconds(new Headers({ 'retry-after': '12' }), now)).toBe(12);
    expect(retryAfterSeconds(new Headers({ 'retry-after-ms': '1500', 'retry-after': '2' }), now)).toBe(1.5);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now)).toBe(30);
    expect(retryAfterSeconds(new Headers(), now)).toBeUndefined();
  });

  it('appends a path once, keeping the query string', () => {
    expect(endpointUrl('http://h/v1', '/chat/completions')).toBe('http://h/v1/chat/completions');
    expect(endpointUrl('http://h/v1/', '/chat/completions')).toBe('http://h/v1/chat/completions');
    expect(endpointUrl('http://h/v1/chat/completions', '/chat/completions')).toBe('http://h/v1/chat/completions');
    expect(endpointUrl('https://x.azure.com/openai/deployments/d?api-version=1', '/chat/completions')).toBe(
      'https://x.azure.com/openai/deployments/d/chat/completions?api-version=1',
    );
  });
});
