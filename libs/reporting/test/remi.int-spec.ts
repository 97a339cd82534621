import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DomainError, RemiQueryRequest, validatePayload, type AuditRecordedEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { createTestDatabase, type TestDatabase } from '@kb/platform/testing';
import type { MessageBus } from '@kb/platform/messaging';
import type { AuditService } from '../src/audit/audit.service';
import { RemiWorkerService } from '../src/remi/remi-worker.service';
import { RemiService } from '../src/remi/remi.service';
import { DEFAULT_REPORTING_OPTIONS, REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { reportingServices } from './usage-fakes';

jest.setTimeout(60_000);

const CONTEXT = [
  { key: 'r1/t/a/0-80', text: 'Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer.' },
  { key: 'r2/t/b/0-60', text: 'The 1957 Indianapolis 500 was held at the Indianapolis Motor Speedway.' },
];

/** Real PostgreSQL (distributed topology) and the embedded PGlite (standalone). */
const BACKENDS = {
  PostgreSQL: () => {
    let db: TestDatabase | undefined;
    return {
      open: async () => {
        db = await createTestDatabase('remi');
        return createServiceDataSource({
          service: 'reporting',
          schema: 'reporting',
          url: db.url,
          entities: REPORTING_ENTITIES,
          migrations: REPORTING_MIGRATIONS,
          runMigrations: true,
        });
      },
      cleanup: async () => db?.drop(),
    };
  },
  PGlite: () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-remi-'));
    return {
      open: () =>
        createServiceDataSource({
          service: 'reporting',
          schema: 'reporting',
          entities: REPORTING_ENTITIES,
          migrations: REPORTING_MIGRATIONS,
          dataDir,
          runMigrations: true,
        }),
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  },
};

describe.each(Object.entries(BACKENDS))('REMi scores on %s', (_name, backend) => {
  const b = backend();
  let ds: DataSource;
  let audit: AuditService;
  let remi: RemiService;
  /** As the gateway and the bus deliver it: the payload checked by its contract. */
  const remiQuery = async (payload: unknown) => remi.query(validatePayload(RemiQueryRequest, payload));
  const kbid = randomUUID();
  const other = randomUUID();
  const chat = (i: number, answer: string, extra: Record<string, unknown> = {}, kb = kbid): AuditRecordedEvent => ({
    event_id: `c${i}`,
    kbid: kb,
    type: 'chat',
    date: new Date(Date.UTC(2026, 10, 22, 10 + i, 0, 0)).toISOString(),
    audit_metadata: {},
    details: {
      question: 'What nationality is Scott Derrickson?',
      answer,
      status: 'success',
      retrieved_context: CONTEXT,
      learning_id: `l${i}`,
      model: 'extractive',
      ...extra,
    },
  });

  beforeAll(async () => {
    ds = await b.open();
    audit = reportingServices(ds).audit;
    remi = new RemiService(ds);
  });

  afterAll(async () => {
    if (ds) await closeServiceDataSource(ds);
    await b.cleanup();
  });

  it('scores stored chat records in the background and answers the three routes', async () => {
    await audit.record(chat(1, 'Scott Derrickson is an American director.'));
    await audit.record(chat(2, 'Scott Derrickson is a Brazilian astronaut born in 1931.'));
    await audit.record(chat(3, 'Not enough data to answer this.', { status: 'no_retrieval_data', retrieved_context: [] }));
    await audit.record(chat(4, 'Scott Derrickson is an American director.', {}, other));
    await audit.record({
      event_id: 'f1',
      kbid,
      type: 'chat',
      date: new Date(Date.UTC(2026, 10, 22, 20)).toISOString(),
      audit_metadata: {},
      details: { feedback: { learning_id: 'l1', good: true }, learning_id: 'l1' },
    });
    const worker = new RemiWorkerService(ds, { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false, remiJudge: false }, {} as MessageBus);
    expect(await worker.turn()).toBe(false);
    // Scored once: a second turn finds nothing new.
    await worker.turn();
    expect((await ds.query(`SELECT count(*)::int AS n FROM reporting.remi_scores`))[0].n).toBe(4);
    // The cursor moved to the last chat record, and the lease is free again.
    const [cursor] = await ds.query(
      `SELECT last_row::int AS last, lease_until < now() AS free, (SELECT max(id)::int FROM reporting.activity_events WHERE type = 'chat') AS max FROM reporting.remi_cursor`,
    );
    expect(cursor).toEqual({ last: cursor.max, free: true, max: expect.any(Number) });

    const all = await remiQuery({ kbid, body: { month: '2026-11' } });
    expect(all.has_more).toBe(false);
    expect(all.data.map((d) => d.answer)).toEqual([
      'Scott Derrickson is an American director.',
      'Scott Derrickson is a Brazilian astronaut born in 1931.',
      'Not enough data to answer this.',
    ]);
    const [right, wrong, none] = all.data.map((d) => d.remi);
    expect(right?.groundedness).toEqual([5]);
    expect(wrong?.groundedness[0]).toBeLessThanOrEqual(2);
    expect(right?.context_relevance[0]).toBeGreaterThan(right?.context_relevance[1] as number);
    expect(none).toEqual({
      answer_relevance: { score: 0, reason: expect.stringContaining('No context') },
      context_relevance: [],
      groundedness: [],
    });

    const page = await remiQuery({ kbid, body: { month: '2026-11', pagination: { limit: 1 } } });
    expect(page).toMatchObject({ has_more: true, data: [{ id: all.data[0]?.id }] });
    const next = await remiQuery({ kbid, body: { month: '2026-11', pagination: { limit: 1, starting_after: page.data[0]?.id } } });
    expect(next.data.map((d) => d.id)).toEqual([all.data[1]?.id]);
    expect((await remiQuery({ kbid, body: { month: '2026-11', feedback_good: true } })).data.map((d) => d.id)).toEqual([all.data[0]?.id]);
    expect((await remiQuery({ kbid, body: { month: '2026-11', status: 'NO_CONTEXT' } })).data.map((d) => d.id)).toEqual([all.data[2]?.id]);
    const relevant = await remiQuery({
      kbid,
      body: { month: '2026-11', context_relevance: { value: 0, operation: 'gt', aggregation: 'max' } },
    });
    expect(relevant.data.map((d) => d.id)).toEqual([all.data[0]?.id, all.data[1]?.id]);
    expect((await remiQuery({ kbid, body: { month: '2026-10' } })).data).toEqual([]);

    const buckets = await remi.scores({ kbid, aggregation: 'day', from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' });
    expect(buckets).toHaveLength(1);
    expect(buckets[0]?.timestamp).toBe('2026-11-22T00:00:00.000Z');
    expect(buckets[0]?.metrics.map((m) => m.name)).toEqual(['answer_relevance', 'context_relevance', 'groundedness']);
    const g = buckets[0]?.metrics[2];
    expect(g?.max).toBe(5);
    expect(g?.min).toBeLessThanOrEqual(2);
    expect(
      (await remi.scores({ kbid, aggregation: 'hour', from: '2026-11-22T00:00:00Z', to: '2026-11-23T00:00:00Z' })).map((b) => b.timestamp),
    ).toEqual(['2026-11-22T11:00:00.000Z', '2026-11-22T12:00:00.000Z', '2026-11-22T13:00:00.000Z']);

    const one = await remi.event({ kbid, event_id: String(all.data[0]?.id) });
    expect(one).toMatchObject({
      status: 'SUCCESS',
      question: 'What nationality is Scott Derrickson?',
      model: 'extractive',
      scorer: 'offline:lexical',
      feedback: { good: true },
    });
    expect(one.context.map((c) => c.key)).toEqual(CONTEXT.map((c) => c.key));
    // Another KB's record is not found through this KB.
    const theirs = (await remiQuery({ kbid: other, body: { month: '2026-11' } })).data[0]?.id;
    await expect(remi.event({ kbid, event_id: String(theirs) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(remi.event({ kbid, event_id: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('uses the built-in model through the bus, and falls back to lexical support when the KB has no such model', async () => {
    const kb2 = randomUUID();
    await audit.record(chat(5, 'Scott Derrickson is an American director.', {}, kb2));
    const requests: string[] = [];
    const bus = {
      request: async (def: { subject: string }, req: { text: string; vectorset: string }) => {
        if (def.subject === 'content.remi.judge') return { outcome: 'no_provider' };
        requests.push(req.vectorset);
        return { vector: [1, req.text.length % 7, 0.5], vectorset: req.vectorset, similarity: 'COSINE', threshold: 0.35 };
      },
    } as unknown as MessageBus;
    await new RemiWorkerService(ds, DEFAULT_REPORTING_OPTIONS, bus).turn();
    const [scored] = (await remiQuery({ kbid: kb2, body: { month: '2026-11' } })).data;
    expect((await remi.event({ kbid: kb2, event_id: String(scored?.id) })).scorer).toBe('offline:en-use-lite-2024');
    expect(new Set(requests)).toEqual(new Set(['en-use-lite-2024']));

    const kb3 = randomUUID();
    await audit.record(chat(6, 'Scott Derrickson is an American director.', {}, kb3));
    const failing = { request: async () => Promise.reject(new Error('unknown vectorset')) } as unknown as MessageBus;
    await new RemiWorkerService(ds, DEFAULT_REPORTING_OPTIONS, failing).turn();
    const [lexical] = (await remiQuery({ kbid: kb3, body: { month: '2026-11' } })).data;
    expect(lexical?.remi.groundedness).toEqual([5]);
    expect((await remi.event({ kbid: kb3, event_id: String(lexical?.id) })).scorer).toBe('offline:lexical');
  });

  it("takes the LLM judge's scores when the KB has a provider, and falls back to the offline scorer, saying why", async () => {
    const kb5 = randomUUID();
    const noProvider = randomUUID();
    const judgeCalls: { kbid: string; sentences: string[]; context: { key: string; text: string }[] }[] = [];
    // One judge answer per record, in the order the records are scored (one at a time here).
    const answers: unknown[] = [
      {
        outcome: 'judged',
        model: 'gpt-4o-mini',
        answer_relevance: { score: 4, reason: 'It names his nationality.' },
        context_relevance: [5, 1],
        groundedness: [3],
      },
      { outcome: 'failed', model: 'gpt-4o-mini', error: 'malformed' },
      { outcome: 'failed', model: 'gpt-4o-mini', error: 'rate_limited' },
      // Checked again in reporting: one context score too few is no judgement.
      { outcome: 'judged', model: 'gpt-4o-mini', answer_relevance: { score: 4, reason: 'x' }, context_relevance: [5], groundedness: [3] },
      Object.assign(new Error('No reply on content.remi.judge within 60000 ms'), { code: 'BUS_TIMEOUT' }),
    ];
    const bus = {
      request: async (def: { subject: string }, req: { kbid: string; sentences: string[]; context: { key: string; text: string }[] }) => {
        if (def.subject !== 'content.remi.judge') throw new Error(`unexpected ${def.subject}`);
        judgeCalls.push(req);
        if (req.kbid === noProvider) return { outcome: 'no_provider' };
        const next = answers.shift();
        if (next instanceof Error) throw new DomainError('BUS_TIMEOUT', next.message);
        return next;
      },
    } as unknown as MessageBus;
    const options = { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false, remiJudgeConcurrency: 1 };
    for (let i = 0; i < 5; i++) await audit.record(chat(10 + i, 'Scott Derrickson is an American director.', {}, kb5));
    // Not sent to the judge: a failed answer, and one that found no context.
    await audit.record(chat(15, '', { status: 'error' }, kb5));
    await audit.record(chat(16, 'Not enough data.', { status: 'no_retrieval_data', retrieved_context: [] }, kb5));
    // A KB without a provider is asked once, then known for a while.
    await audit.record(chat(17, 'Scott Derrickson is an American director.', {}, noProvider));
    await audit.record(chat(18, 'Scott Derrickson is an American director.', {}, noProvider));
    await new RemiWorkerService(ds, options, bus).turn();

    const scored = (await remi.query({ kbid: kb5, body: { month: '2026-11' } })).data;
    expect(scored).toHaveLength(7);
    const events = await Promise.all(scored.map((d) => remi.event({ kbid: kb5, event_id: String(d.id) })));
    expect(events.map((e) => [e.scorer, e.judge_error])).toEqual([
      ['llm:gpt-4o-mini', null],
      ['offline:lexical', 'malformed'],
      ['offline:lexical', 'rate_limited'],
      ['offline:lexical', 'malformed'],
      ['offline:lexical', 'timeout'],
      ['offline:lexical', null],
      ['offline:lexical', null],
    ]);
    expect(events[0]?.remi).toEqual({
      answer_relevance: { score: 4, reason: 'It names his nationality.' },
      context_relevance: [5, 1],
      groundedness: [3],
    });
    expect(events[0]?.context.map((c) => c.context_relevance)).toEqual([5, 1]);
    // The fallback is the offline scorer's own answer.
    expect(events[1]?.remi.groundedness).toEqual([5]);
    expect(judgeCalls.filter((c) => c.kbid === kb5)).toHaveLength(5);
    expect(judgeCalls[0]).toMatchObject({ sentences: ['Scott Derrickson is an American director.'], context: CONTEXT });
    expect(judgeCalls.filter((c) => c.kbid === noProvider)).toHaveLength(1);
    expect((await remi.query({ kbid: noProvider, body: { month: '2026-11' } })).data).toHaveLength(2);
  });

  it('has at most REMI_JUDGE_CONCURRENCY judge calls in flight, and lengthens its lease to fit them', async () => {
    const kb6 = randomUUID();
    for (let i = 0; i < 6; i++) await audit.record(chat(20 + i, 'Scott Derrickson is an American director.', {}, kb6));
    let inFlight = 0;
    let most = 0;
    const bus = {
      request: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { outcome: 'failed', model: 'm', error: 'provider' };
      },
    } as unknown as MessageBus;
    const options = { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false, remiJudgeConcurrency: 2, remiJudgeTimeoutMs: 30_000 };
    const worker = new RemiWorkerService(ds, options, bus);
    await worker.turn();
    expect(most).toBe(2);
    expect((await remi.query({ kbid: kb6, body: { month: '2026-11' } })).data).toHaveLength(6);
    const [lease] = await ds.query(`SELECT lease_until < now() AS free FROM reporting.remi_cursor`);
    expect(lease.free).toBe(true);
    // A batch of 20 at 2 at a time, each up to 30 s, needs 10 × 30 s + 60 s of lease.
    expect((worker as unknown as { leaseSeconds: number }).leaseSeconds).toBe(360);
  });

  it('scores while another process holds no lease, and catches records committed behind the cursor', async () => {
    const kb4 = randomUUID();
    const worker = new RemiWorkerService(ds, { ...DEFAULT_REPORTING_OPTIONS, remiSemantic: false, remiJudge: false }, {} as MessageBus);
    await audit.record(chat(7, 'Scott Derrickson is an American director.', {}, kb4));
    await ds.query(`UPDATE reporting.remi_cursor SET lease_until = now() + interval '1 minute'`);
    expect(await worker.turn()).toBe(false);
    expect((await remiQuery({ kbid: kb4, body: { month: '2026-11' } })).data).toEqual([]);
    // The holder's lease ends; the cursor had moved past this record (a later id scored first).
    await ds.query(
      `UPDATE reporting.remi_cursor SET lease_until = '-infinity', last_row = (SELECT max(id) + 100 FROM reporting.activity_events)`,
    );
    await worker.turn();
    expect((await remiQuery({ kbid: kb4, body: { month: '2026-11' } })).data.map((d) => d.answer)).toEqual([
      'Scott Derrickson is an American director.',
    ]);
  });

  it('refuses bad queries with every issue at once', async () => {
    await expect(
      remiQuery({ kbid, body: { context_relevance: { value: 9, operation: 'like' }, status: 'OK', pagination: { limit: 1000 } } }),
    ).rejects.toMatchObject({
      details: {
        detail: expect.arrayContaining([
          expect.objectContaining({ loc: ['body', 'month'] }),
          expect.objectContaining({ loc: ['body', 'context_relevance', 'value'] }),
          expect.objectContaining({ loc: ['body', 'context_relevance', 'operation'] }),
          expect.objectContaining({ loc: ['body', 'status'] }),
          expect.objectContaining({ loc: ['body', 'pagination', 'limit'] }),
        ]),
      },
    });
    await expect(
      remi.scores({ kbid, aggregation: 'hour', from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(remi.scores({ kbid })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
