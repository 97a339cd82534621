import { startFakeLlmServer, type FakeLlmServer } from '@kb/platform/testing';
import { bearer, type Credential } from '../support/http-client';
import type { Topology } from '../support/topologies';

/**
 * The attack: ask a question whose answer is slow to generate, then hang up. Before the fix the
 * service kept the provider call open (and billed) until the provider's own time limit, so a
 * client could pile up provider calls for nobody. Now the gateway cancels the bus call, the content
 * service's handler sees its signal abort and the provider connection is closed.
 */
export function describeAskCancellation(topology: () => Topology): void {
  describe('a client that hangs up on a streaming /ask', () => {
    let llm: FakeLlmServer;
    let owner: Credential;
    let kbid: string;

    beforeAll(async () => {
      // One chunk, then the provider "thinks" for ever (as a slow model would).
      llm = await startFakeLlmServer({ chunks: ['The sky', ' is blue.'], hang: { afterChunks: 1 } });
      const boot = topology().bootstrap();
      owner = bearer(boot.personal_access_token.token);
      const res = await topology().http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
        credential: owner,
        // The provider's own time limit is far away: only a cancellation closes the call in time.
        body: {
          slug: `slow-llm-${Date.now()}`,
          title: 'slow llm',
          learning_configuration: {
            generative_model: 'chatgpt-4o-mini',
            user_keys: { openai: { url: llm.openAiUrl, key: 'sk-slow', timeout_ms: 300_000 } },
          },
        },
      });
      expect(res.status).toBe(201);
      kbid = (res.body.uuid ?? res.body.id) as string;
    }, 60_000);

    afterAll(async () => {
      await llm?.close();
    });

    it('stops the provider call within seconds', async () => {
      const http = topology().http;
      const client = new AbortController();
      // Extra context: the KB holds nothing, yet the generator is asked.
      const res = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/ask`, {
        method: 'POST',
        signal: client.signal,
        headers: { 'content-type': 'application/json', [owner?.header as string]: owner?.value as string },
        body: JSON.stringify({ query: 'What colour is the sky?', extra_context: ['The sky is blue.'] }),
      });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes('The sky')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain('"answer"');
      expect(llm.requests).toHaveLength(1);
      expect(llm.requests[0]?.abandoned).toBe(false);
      client.abort();
      await http.eventually(async () => (llm.requests[0]?.abandoned ? true : undefined), 10_000, 'the provider connection to be closed');
    }, 60_000);
  });
}
