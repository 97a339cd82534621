import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFakeLlmServer } from '@kb/platform/testing';
import { bearer } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startStandalone } from '../support/topologies';
import { percentile } from './ir-metrics';
import { cliArgs, numberArg } from './retrieval.bench';

/**
 * What the service adds to a provider's own time to first token on `/ask`, through the gateway of
 * the standalone service: a local OpenAI-compatible server sends its first chunk `--provider-ms`
 * after it received the request; the client measures when the first `answer` item arrives.
 *
 *   npm run bench -- ask-latency [--asks 50] [--provider-ms 200] [--docs 200]
 *
 * Reported: client time to first answer item; of it, the time before the provider was called
 * (retrieval, context, prompt) and the streaming overhead after the provider's first chunk
 * (first item at the client − (request received by the provider + provider-ms)).
 */
async function main(): Promise<void> {
  const { values: a } = parseArgs({
    args: cliArgs(),
    options: {
      asks: { type: 'string', default: '50' },
      'provider-ms': { type: 'string', default: '200' },
      docs: { type: 'string', default: '200' },
    },
  });
  const asks = numberArg('asks', a.asks) ?? 50;
  const providerMs = numberArg('provider-ms', a['provider-ms'], 0) ?? 200;
  const docs = numberArg('docs', a.docs) ?? 200;
  const llm = await startFakeLlmServer({ chunks: ['The answer ', 'is in the context.'], firstChunkDelayMs: providerMs });
  const topology = await startStandalone();
  try {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const kb = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: {
        slug: 'ask-latency',
        title: 'ask latency',
        learning_configuration: { generative_model: 'chatgpt-4o-mini', user_keys: { openai: { url: llm.openAiUrl, key: 'sk-bench' } } },
      },
    });
    const kbid = (kb.body.uuid ?? kb.body.id) as string;
    const topics = ['tides and the moon', 'volcanoes and magma', 'bread and yeast', 'stars and galaxies', 'cells and proteins'];
    for (let i = 0; i < docs; i++) {
      const t = topics[i % topics.length] as string;
      await topology.http.call('POST', `/api/v1/kb/${kbid}/resources`, {
        credential: pat,
        body: {
          title: `${t} ${i}`,
          texts: { body: { body: `Document ${i} explains ${t}. It has a second sentence about ${t} and number ${i}.` } },
        },
      });
    }
    await topology.http.eventually(
      async () => {
        const list = await topology.http.call<{ resources: { metadata: { status: string } }[]; pagination: { last: boolean } }>(
          'GET',
          `/api/v1/kb/${kbid}/resources?size=200&page=${Math.floor((docs - 1) / 200)}`,
          { credential: pat },
        );
        return list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      600_000,
      'processing',
    );
    await new Promise((r) => setTimeout(r, 2000));
    const ttft: number[] = [];
    const before: number[] = [];
    const overhead: number[] = [];
    for (let i = 0; i < asks + 3; i++) {
      const question = `What about ${topics[i % topics.length]} in document ${i}?`;
      const t0 = performance.now();
      const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kbid}/ask`, {
        method: 'POST',
        headers: { authorization: `Bearer ${boot.personal_access_token.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: question }),
      });
      if (!res.body) throw new Error(`/ask answered ${res.status} without a body`);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = '';
      let first: number | undefined;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        if (first === undefined && buffered.includes('"type":"answer"')) first = performance.now();
      }
      // The answer's own call: the streamed one of this /ask (the last request may be a later one,
      // such as REMi's scoring of the answer, which made "before the call" include the answer).
      const calls = llm.requests.filter((r) => r.receivedAt >= t0);
      const request = calls.find((r) => r.body['stream'] === true) ?? calls[0];
      if (i < 3 || first === undefined || !request) continue; // warm-up
      ttft.push(first - t0);
      before.push(request.receivedAt - t0);
      overhead.push(first - (request.receivedAt + providerMs));
    }
    const row = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 95).toFixed(1)}`;
    console.log(`\n/ask through the gateway, ${docs} docs, provider first chunk after ${providerMs} ms, ${asks} asks (p50 / p95 ms)\n`);
    console.log(
      "| client time to first answer item | before the provider call (retrieval, context, prompt) | streaming overhead after the provider's first chunk |",
    );
    console.log('|---|---|---|');
    console.log(`| ${row(ttft)} | ${row(before)} | ${row(overhead)} |`);
    // For bench:compare (docs/benchmarks.md): every figure by name, milliseconds.
    const figures = (xs: number[]) => ({ p50_ms: Number(percentile(xs, 50).toFixed(1)), p95_ms: Number(percentile(xs, 95).toFixed(1)) });
    const dir = join(REPO_ROOT, 'tmp', 'bench');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'ask-latency.json'),
      JSON.stringify(
        {
          date: new Date().toISOString(),
          docs,
          asks,
          provider_ms: providerMs,
          first_answer_item: figures(ttft),
          before_provider_call: figures(before),
          streaming_overhead: figures(overhead),
        },
        null,
        2,
      ),
    );
  } finally {
    await topology.stop();
    await llm.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
