import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeEmbeddingServer {
  /** `http://127.0.0.1:<port>/v1`: what an OpenAI-compatible client takes as its base url. */
  url: string;
  /** Every request body received, in order. */
  requests: { input: string[]; model: string; authorization?: string }[];
  close(): Promise<void>;
}

/**
 * Deterministic embedding of a text: hashed word counts (first five letters of each word), unit
 * length. Texts sharing words point the same way, which is all a retrieval test needs.
 */
export function hashedEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const w of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    let h = 0;
    for (const c of w.slice(0, 5)) h = (h * 31 + c.charCodeAt(0)) % 9973;
    v[h % dimensions] = (v[h % dimensions] as number) + 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** A local server speaking OpenAI's `POST /v1/embeddings` (as TEI, vLLM, Ollama and OpenAI do). */
export async function startFakeEmbeddingServer(dimensions = 64): Promise<FakeEmbeddingServer> {
  const requests: FakeEmbeddingServer['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/embeddings')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      let body: { input?: unknown; model?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON' } }));
        return;
      }
      const input = Array.isArray(body.input) ? body.input.map(String) : [String(body.input ?? '')];
      requests.push({ input, model: String(body.model ?? ''), authorization: req.headers['authorization'] });
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: hashedEmbedding(text, dimensions) }));
      const tokens = input.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
