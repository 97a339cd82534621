import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the fake provider answers. Every member is optional: the default is a two-chunk answer
 * ("Hello" " world") with usage, streamed at once.
 */
export interface FakeLlmScript {
  /** Answer chunks, one delta event each. */
  chunks?: string[];
  /** Reasoning chunks sent before the answer (`delta.reasoning_content` / Anthropic `thinking_delta`). */
  reasoning?: string[];
  /** Reported token usage; default input = request body length / 4, output = number of chunks. */
  usage?: { input: number; output: number };
  /** Stop reason; default `stop` (OpenAI) / `end_turn` (Anthropic). */
  stopReason?: string;
  /** Wait before the response headers and the first event. */
  firstChunkDelayMs?: number;
  /** Wait between events. */
  chunkDelayMs?: number;
  /** Answer with this HTTP status and the provider's error body instead of a stream. */
  status?: number;
  /** Error message of `status` or `midStreamError`. */
  errorMessage?: string;
  /** Sent as `Retry-After` with `status`. */
  retryAfter?: string;
  /** After this many answer chunks, send the provider's in-stream error and end the stream. */
  midStreamError?: { afterChunks: number; type?: string };
  /** Hang without ever finishing: before the headers, or after this many answer chunks. */
  hang?: 'before-headers' | { afterChunks: number };
  /** Close the connection abruptly after this many answer chunks. */
  dropAfterChunks?: number;
  /** End without `data: [DONE]` / `message_stop` (and without a finish reason). */
  omitEnd?: boolean;
  /** Write the stream in pieces of this many bytes, split anywhere (even inside a UTF-8 character). */
  fragmentBytes?: number;
  /** Line ending of the event stream (default `\n`). */
  lineEnding?: '\n' | '\r\n';
  /** Answer with one JSON document even when the request asked to stream (as some proxies do). */
  ignoreStream?: boolean;
  /**
   * Anthropic only: when the request offers tools, answer by calling this one (default: the tool
   * `tool_choice` names, else the first) — the chunks are its `input_json_delta`s. OpenAI structured
   * outputs (`response_format: json_schema`) need nothing: the chunks are the JSON content.
   */
  toolName?: string;
}

export interface FakeLlmRequest {
  method: string;
  /** Path with query string, e.g. `/v1/chat/completions?api-version=2024-10-21`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /**
   * The images of the request's messages, in order, whatever the protocol: OpenAI `image_url`
   * parts (data URLs) and Anthropic `image` blocks (base64 sources); `url` for a remote image.
   */
  images: { mediaType?: string; data?: string; url?: string }[];
  /** `performance.now()` when the whole request had arrived (for latency benchmarks). */
  receivedAt: number;
  /** Set when the client closed the connection before the answer was complete (it gave up or was cancelled). */
  abandoned: boolean;
}

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>`: the Anthropic base url; OpenAI-compatible clients use `openAiUrl`. */
  url: string;
  /** `<url>/v1`. */
  openAiUrl: string;
  /** Every request received, in order. */
  requests: FakeLlmRequest[];
  /** Script for every later request without a queued one. */
  setDefault(script: FakeLlmScript): void;
  /** Script for the next request only (queued, first in first out). */
  enqueue(...scripts: FakeLlmScript[]): void;
  /** Forgets requests and queued scripts and restores the default script. */
  reset(): void;
  close(): Promise<void>;
}

type Protocol = 'openai' | 'anthropic';

function imagesOf(body: Record<string, unknown>): FakeLlmRequest['images'] {
  const out: FakeLlmRequest['images'] = [];
  const messages = Array.isArray(body['messages']) ? (body['messages'] as { content?: unknown }[]) : [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Record<string, unknown>[]) {
      if (part['type'] === 'image_url') {
        const url = String((part['image_url'] as { url?: unknown } | undefined)?.url ?? '');
        const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
        out.push(data ? { mediaType: data[1], data: data[2] } : { url });
      } else if (part['type'] === 'image') {
        const source = (part['source'] ?? {}) as Record<string, unknown>;
        out.push(
          source['type'] === 'base64'
            ? { mediaType: String(source['media_type']), data: String(source['data']) }
            : { url: String(source['url']) },
        );
      }
    }
  }
  return out;
}

/**
 * A generative provider for tests speaking both real streaming protocols on one port: OpenAI chat
 * completions (`POST …/chat/completions`, SSE `data:` chunks, usage chunk, `[DONE]`) and Anthropic
 * Messages (`POST …/messages`, named events from `message_start` to `message_stop`). Scripts
 * control delays, failures and hangs; requests are recorded for assertions.
 */
export async function startFakeLlmServer(defaults: FakeLlmScript = {}): Promise<FakeLlmServer> {
  let fallback = defaults;
  const queue: FakeLlmScript[] = [];
  const requests: FakeLlmRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw || '{}') as Record<string, unknown>;
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'body is not JSON', type: 'invalid_request_error' } }));
        return;
      }
      const path = req.url ?? '/';
      const entry: FakeLlmRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        images: imagesOf(body),
        receivedAt: performance.now(),
        abandoned: false,
      };
      requests.push(entry);
      res.on('close', () => {
        if (!res.writableFinished) entry.abandoned = true;
      });
      const pathname = path.split('?')[0] as string;
      const protocol: Protocol | undefined = pathname.endsWith('/chat/completions')
        ? 'openai'
        : pathname.endsWith('/messages')
          ? 'anthropic'
          : undefined;
      if (req.method !== 'POST' || !protocol) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${pathname}` } }));
        return;
      }
      void respond(protocol, queue.shift() ?? fallback, body, raw.length, res).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openAiUrl: `${url}/v1`,
    requests,
    setDefault: (script) => (fallback = script),
    enqueue: (...scripts) => queue.push(...scripts),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      fallback = defaults;
    },
    close: async () => {
      // Hanging responses and keep-alive sockets would hold close() open.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function respond(
  protocol: Protocol,
  s: FakeLlmScript,
  body: Record<string, unknown>,
  bodyLength: number,
  res: ServerResponse,
): Promise<void> {
  if (s.hang === 'before-headers') return;
  await sleep(s.firstChunkDelayMs);
  if (s.status) {
    const message = s.errorMessage ?? `fake error ${s.status}`;
    const error =
      protocol === 'openai'
        ? { error: { message, type: s.status >= 500 ? 'server_error' : 'invalid_request_error', code: null } }
        : { type: 'error', error: { type: anthropicErrorType(s.status), message } };
    res
      .writeHead(s.status, { 'content-type': 'application/json', ...(s.retryAfter ? { 'retry-after': s.retryAfter } : {}) })
      .end(JSON.stringify(error));
    return;
  }
  const chunks = s.chunks ?? ['Hello', ' world'];
  const tool = protocol === 'anthropic' ? answerTool(body, s) : undefined;
  const usage = s.usage ?? { input: Math.ceil(bodyLength / 4), output: chunks.length };
  const model = typeof body['model'] === 'string' ? body['model'] : 'fake-model';

  if (body['stream'] !== true || s.ignoreStream) {
    const whole =
      protocol === 'openai'
        ? {
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: chunks.join(''),
                  ...(s.reasoning ? { reasoning_content: s.reasoning.join('') } : {}),
                },
                finish_reason: s.stopReason ?? 'stop',
              },
            ],
            usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
          }
        : {
            id: 'msg_fake',
            type: 'message',
            role: 'assistant',
            model,
            content: [
              ...(s.reasoning ? [{ type: 'thinking', thinking: s.reasoning.join(''), signature: 'fake-signature' }] : []),
              tool
                ? { type: 'tool_use', id: 'toolu_fake', name: tool, input: JSON.parse(chunks.join('')) as unknown }
                : { type: 'text', text: chunks.join('') },
            ],
            stop_reason: s.stopReason ?? (tool ? 'tool_use' : 'end_turn'),
            stop_sequence: null,
            usage: { input_tokens: usage.input, output_tokens: usage.output },
          };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(whole));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const eol = s.lineEnding ?? '\n';
  const send = async (event: string | undefined, data: unknown): Promise<void> => {
    // The client went away (timeout, abort): stop scripting into a closed socket.
    if (res.destroyed || res.writableEnded) throw new Error('client disconnected');
    const text = `${event ? `event: ${event}${eol}` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}${eol}${eol}`;
    const bytes = Buffer.from(text, 'utf8');
    if (!s.fragmentBytes) {
      res.write(bytes);
    } else {
      for (let i = 0; i < bytes.length; i += s.fragmentBytes) {
        res.write(bytes.subarray(i, i + s.fragmentBytes));
        await sleep(1);
      }
    }
  };
  const openai = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const pause = (): Promise<void> => sleep(s.chunkDelayMs);

  if (protocol === 'openai') await send(undefined, openai({ role: 'assistant', content: '' }));
  else {
    await send('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    });
    await send('ping', { type: 'ping' });
  }
  let block = 0;
  if (s.reasoning?.length) {
    if (protocol === 'anthropic')
      await send('content_block_start', { type: 'content_block_start', index: block, content_block: { type: 'thinking', thinking: '' } });
    for (const r of s.reasoning) {
      await pause();
      if (protocol === 'openai') await send(undefined, openai({ reasoning_content: r }));
      else await send('content_block_delta', { type: 'content_block_delta', index: block, delta: { type: 'thinking_delta', thinking: r } });
    }
    if (protocol === 'anthropic') {
      await send('content_block_delta', {
        type: 'content_block_delta',
        index: block,
        delta: { type: 'signature_delta', signature: 'fake-signature' },
      });
      await send('content_block_stop', { type: 'content_block_stop', index: block++ });
    }
  }
  if (protocol === 'anthropic') {
    const start = tool ? { type: 'tool_use', id: 'toolu_fake', name: tool, input: {} } : { type: 'text', text: '' };
    await send('content_block_start', { type: 'content_block_start', index: block, content_block: start });
  }
  for (let i = 0; i <= chunks.length; i++) {
    if (s.midStreamError && s.midStreamError.afterChunks === i) {
      const message = s.errorMessage ?? 'fake mid-stream failure';
      if (protocol === 'openai') await send(undefined, { error: { message, type: s.midStreamError.type ?? 'server_error', code: null } });
      else await send('error', { type: 'error', error: { type: s.midStreamError.type ?? 'api_error', message } });
      res.end();
      return;
    }
    if (typeof s.hang === 'object' && s.hang.afterChunks === i) return;
    if (s.dropAfterChunks === i) {
      res.destroy();
      return;
    }
    if (i === chunks.length) break;
    await pause();
    const text = chunks[i] as string;
    if (protocol === 'openai') await send(undefined, openai({ content: text }));
    else if (tool)
      await send('content_block_delta', {
        type: 'content_block_delta',
        index: block,
        delta: { type: 'input_json_delta', partial_json: text },
      });
    else await send('content_block_delta', { type: 'content_block_delta', index: block, delta: { type: 'text_delta', text } });
  }
  if (s.omitEnd) {
    res.end();
    return;
  }
  if (protocol === 'openai') {
    await send(undefined, openai({}, s.stopReason ?? 'stop'));
    const options = body['stream_options'] as { include_usage?: boolean } | undefined;
    if (options?.include_usage) {
      await send(undefined, {
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model,
        choices: [],
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
      });
    }
    await send(undefined, '[DONE]');
  } else {
    await send('content_block_stop', { type: 'content_block_stop', index: block });
    await send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: s.stopReason ?? (tool ? 'tool_use' : 'end_turn'), stop_sequence: null },
      usage: { output_tokens: usage.output },
    });
    await send('message_stop', { type: 'message_stop' });
  }
  res.end();
}

/** The tool an Anthropic answer calls: none unless the request offers tools. */
function answerTool(body: Record<string, unknown>, s: FakeLlmScript): string | undefined {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as { name?: string }[]) : [];
  if (!tools.length) return undefined;
  const choice = body['tool_choice'] as { type?: string; name?: string } | undefined;
  return s.toolName ?? (choice?.type === 'tool' ? choice.name : undefined) ?? tools[0]?.name;
}

function anthropicErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    529: 'overloaded_error',
  };
  return types[status] ?? 'api_error';
}

function sleep(ms: number | undefined): Promise<void> {
  return ms ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
