import { AuditBatchEvent, ContentSubjects, validatePayload, type AuditRecordedEvent, type EventDef } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../../auth/auth.guard';
import { PredictUsage, selfHostedUse, TokenMeter } from './predict-usage';

const ACCOUNT = '2b0f6c1e-8f0a-4a57-9c55-0f1b7c3a9d10';
const KEY = '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a';
const KB = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

function setup() {
  const published: { subject: string; payload: { events: AuditRecordedEvent[] }; msgId?: string }[] = [];
  const bus = {
    publish: async (def: EventDef<unknown>, payload: { events: AuditRecordedEvent[] }, o?: { msgId?: string }) => {
      published.push({ subject: def.subject, payload, msgId: o?.msgId });
    },
  } as unknown as MessageBus;
  return { usage: new PredictUsage(bus), published };
}

const request = (principal: Record<string, unknown>, headers: Record<string, string> = {}): AuthedRequest =>
  ({ headers, principal }) as unknown as AuthedRequest;

describe('predict usage', () => {
  it('classes the calls of a self-hosted deployment: query vectors and query information are searches, generations answers', () => {
    expect(['sentence', 'query', 'chat', 'compat/chat/completions'].map((e) => selfHostedUse(e))).toEqual([
      'search',
      'search',
      'answer',
      'answer',
    ]);
    expect(['sentences', 'tokens', 'summarize', 'rephrase', 'rerank', 'remi', 'compat/models', ''].map((e) => selfHostedUse(e))).toEqual(
      new Array(8).fill(undefined),
    );
    expect(selfHostedUse('compat/embeddings', { input: 'q' })).toBe('search');
    expect(selfHostedUse('compat/embeddings', { input: ['q'] })).toBe('search');
    expect(selfHostedUse('compat/embeddings', { input: ['a', 'b'] })).toBeUndefined();
    expect(selfHostedUse('compat/embeddings', undefined)).toBeUndefined();
  });

  it('adds up the tokens of several generations, ignoring what is not a count', () => {
    const meter = new TokenMeter();
    meter.add({ input_tokens: 10, output_tokens: 4, model: 'm1' });
    meter.add({ input_tokens: -3, output_tokens: Number.NaN, model: 'm2' });
    meter.add(undefined);
    meter.add({ output_tokens: 6 });
    expect(meter.outcome()).toEqual({ input_tokens: 10, output_tokens: 10, model: 'm1' });
  });

  it("records a KB's call under the KB and a key's under its account with the key, in one valid batch message", async () => {
    const { usage, published } = setup();
    usage.record(request({ id: 'k1', kind: 'api_key', account_id: ACCOUNT }), KB, 'chat', performance.now(), {
      input_tokens: 5,
      output_tokens: 7,
      model: 'extractive',
    });
    usage.record(request({ id: KEY, kind: 'ua_key', account_id: ACCOUNT }), undefined, 'sentence', performance.now());
    usage.record(request({ id: KEY, kind: 'ua_key', account_id: ACCOUNT }), undefined, 'chat', performance.now(), { failed: true });
    // A key's call on a KB of its account (the `/{kbid}` variants): the KB's, still the key's self-hosted search.
    usage.record(request({ id: KEY, kind: 'ua_key', account_id: ACCOUNT }), KB, 'query', performance.now());
    // A caller without an account and no KB cannot be attributed (the access rule never lets one through): nothing recorded.
    usage.record(request({ id: 'x', kind: 'ua_key' }), undefined, 'sentence', performance.now());
    expect(published).toEqual([]);
    await usage.flush();
    expect(published).toHaveLength(1);
    const [message] = published;
    expect(message?.subject).toBe(ContentSubjects.auditBatch.subject);
    expect(message?.msgId).toBe(`batch:${message?.payload.events[0]?.event_id}:4`);
    // What reporting accepts on the bus.
    expect(() => validatePayload(AuditBatchEvent, message?.payload)).not.toThrow();
    const [kb, search, answer, keyOnKb] = message?.payload.events ?? [];
    expect(kb).toMatchObject({
      kbid: KB,
      type: 'predict',
      user_type: 'nuakey',
      details: { endpoint: 'chat', scope: 'kb', input_tokens: 5, output_tokens: 7, model: 'extractive' },
    });
    expect(kb?.nua_key_id).toBeUndefined();
    expect(kb?.details?.['self_hosted']).toBeUndefined();
    expect(search).toMatchObject({
      kbid: ACCOUNT,
      nua_key_id: KEY,
      details: { endpoint: 'sentence', scope: 'account', account_id: ACCOUNT, self_hosted: 'search' },
    });
    expect(answer?.details).toMatchObject({ endpoint: 'chat', self_hosted: 'answer', status: 'error' });
    expect(keyOnKb).toMatchObject({ kbid: KB, nua_key_id: KEY, details: { endpoint: 'query', scope: 'kb', self_hosted: 'search' } });
    expect(new Set(message?.payload.events.map((e) => e.event_id)).size).toBe(4);
    await usage.flush();
    expect(published).toHaveLength(1); // nothing waiting: no empty message
  });
});
