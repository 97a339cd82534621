import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundHttp } from '@kb/platform/net';
import { EMBEDDING_CONFIG_INVALID, EMBEDDING_FAILED } from './embedder';
import { OpenAiCompatibleEmbedder, type OpenAiCompatibleOptions } from './openai.embedder';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

interface Received {
  path: string;
  authorization?: string;
  body: { input: string[]; model: string; dimensions?: number };
}

type Reply = (req: Received, res: ServerResponse) => void;

/** A provider speaking OpenAI's /v1/embeddings: vector i of a text is [len, charCode(0), i, 1…]. */
const embed = (text: string, size: number): number[] =>
  Array.from({ length: size }, (_, i) => [text.length, text.charCodeAt(0) || 0, i][i] ?? 1);
const ok =
  (size = 4, shuffle = false): Reply =>
  (req, res) => {
    const data = req.body.input.map((text, index) => ({ object: 'embedding', index, embedding: embed(text, req.body.dimensions ?? size) }));
    if (shuffle) data.reverse();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: req.body.model }));
  };

describe('OpenAiCompatibleEmbedder', () => {
  let server: Server;
  let base: string;
  const received: Received[] = [];
  const replies: Reply[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const r: Received = { path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(raw) as Received['body'] };
        received.push(r);
        (replies.shift() ?? ok())(r, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    // fetch keeps connections alive; without this, close() waits for them to idle out.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    received.length = 0;
    replies.length = 0;
  });

  const make = (options: Partial<OpenAiCompatibleOptions> = {}): OpenAiCompatibleEmbedder =>
    new OpenAiCompatibleEmbedder({ url: base, key: 'sk-test', model: 'test-embed', retryBaseMs: 10, http: local, ...options });

  it('sends the OpenAI request, batches, and orders vectors by index', async () => {
    replies.push(ok(4, true), ok(4, true));
    const embedder = make({ maxBatch: 2, similarity: 'DOT', passage_prompt: 'passage: ' });
    expect(embedder.dimensions).toBe(0);
    const vectors = await embedder.embedPassages(['a', 'bb', 'ccc']);
    expect(received.map((r) => [r.path, r.authorization, r.body])).toEqual([
      ['/v1/embeddings', 'Bearer sk-test', { input: ['passage: a', 'passage: bb'], model: 'test-embed' }],
      ['/v1/embeddings', 'Bearer sk-test', { input: ['passage: ccc'], model: 'test-embed' }],
    ]);
    expect(vectors.map((v) => v[0])).toEqual([10, 11, 12]);
    expect(embedder.dimensions).toBe(4);
    expect(make({ model: 'text-embedding-3-large' }).dimensions).toBe(3072);
  });

  it('applies the query prompt and normalises COSINE vectors', async () => {
    replies.push(ok(2));
    const embedder = make({ model: 'custom', query_prompt: 'query: ', url: `${base}/embeddings` });
    const vector = await embedder.embedQuery('hi');
    expect(received[0]!.body.input).toEqual(['query: hi']);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 10);
    expect(embedder.dimensions).toBe(2);
  });

  it('asks matryoshka models for the configured size and cuts longer answers', async () => {
    // This provider ignores `dimensions` and answers with the full length.
    replies.push((req, res) => ok(1536)({ ...req, body: { ...req.body, dimensions: undefined } }, res));
    const embedder = make({ matryoshka: [256, 512, 1536], dimensions: 256 });
    const [vector] = await embedder.embedPassages(['x']);
    expect(received[0]!.body.dimensions).toBe(256);
    expect(vector).toHaveLength(256);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 10);
  });

  it('waits out a 429 as Retry-After says, then succeeds', async () => {
    replies.push((_req, res) =>
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"error":{"message":"Rate limit reached"}}'),
    );
    replies.push(ok());
    const started = Date.now();
    const [vector] = await make().embedPassages(['x']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(received).toHaveLength(2);
    expect(vector).toHaveLength(4);
  });

  it('retries 5xx with backoff and gives up after maxRetries, saying so', async () => {
    for (let i = 0; i < 3; i++) replies.push((_req, res) => res.writeHead(503).end('upstream overloaded'));
    await expect(make({ maxRetries: 2 }).embedPassages(['x'])).rejects.toMatchObject({
      code: EMBEDDING_FAILED,
      message: 'embedding provider answered HTTP 503 (unavailable)',
      details: { status: 503, retryable: true },
    });
    expect(received).toHaveLength(3);
  });

  it('fails at once on a 400 with the status and a reason of our own, not the provider body', async () => {
    replies.push((_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"message":"This model does not support specifying dimensions.","type":"invalid_request_error"}}'),
    );
    await expect(make().embedPassages(['x'])).rejects.toMatchObject({
      code: EMBEDDING_FAILED,
      message: 'embedding provider answered HTTP 400 (bad request)',
      details: { status: 400, retryable: false },
    });
    expect(received).toHaveLength(1);
  });

  it('does not wait out a Retry-After beyond its limit', async () => {
    replies.push((_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end('slow down'));
    await expect(make({ maxRetryAfterMs: 5000 }).embedPassages(['x'])).rejects.toMatchObject({ details: { status: 429, retryable: true } });
    expect(received).toHaveLength(1);
  });

  it.each([
    ['a wrong count', '{"data":[]}', 'expected 1 embeddings, got 0'],
    ['base64 vectors', '{"data":[{"index":0,"embedding":"AAAA"}]}', 'not a float array'],
    ['not JSON', 'oops', 'invalid response'],
  ])('rejects %s', async (_name, body, message) => {
    replies.push((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await expect(make().embedPassages(['x'])).rejects.toThrow(message);
  });

  it('times out, retries, and reports the provider as unreachable', async () => {
    const stall: Reply = (_req, res) => setTimeout(() => ok()(_req, res), 300);
    replies.push(stall, stall);
    await expect(make({ timeoutMs: 50, maxRetries: 1 }).embedPassages(['x'])).rejects.toMatchObject({
      message: expect.stringContaining('unreachable'),
      details: { retryable: true },
    });
    await new Promise((r) => setTimeout(r, 350));
  });

  it('stops waiting for a retry when closed', async () => {
    replies.push((_req, res) => res.writeHead(429, { 'retry-after': '30' }).end('busy'));
    const embedder = make();
    const pending = embedder.embedPassages(['x']);
    await new Promise((r) => setTimeout(r, 100));
    await embedder.close();
    await expect(pending).rejects.toMatchObject({ message: 'embedder is closed', details: { retryable: false } });
  });

  it.each([
    [{ url: 'ftp://x' }, 'url must be an http(s) address'],
    [{ model: '' }, 'model is required'],
    [{ matryoshka: [256, 512], dimensions: 300 }, 'size 300 is not one of the matryoshka sizes 256, 512'],
  ])('rejects configuration %j', (options, message) => {
    expect(() => make(options)).toThrow(
      expect.objectContaining({ code: EMBEDDING_CONFIG_INVALID, message: expect.stringContaining(message) }),
    );
  });
});
