import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ContentSubjects, type AuditRecordedEvent } from '@kb/contracts';
import { startDistributed, type Topology } from './support/topologies';
import { runWorkload, usageReaches, usageSetup, WORKLOAD, type UsageJourneyContext } from './usage-journey';
import { predictUsageJourney } from './usage-predict-journey';

type Account = { blocking_state: string; blocked_features: string[] };

/**
 * Usage across processes (issue 19): the workload metered by the reporting service from the events
 * content publishes over JetStream, one event delivered twice (published twice, as a publisher
 * retrying after a lost acknowledgement would) counted once, and a block decided by reporting
 * reaching the gateway (402) and the account record, then lifted.
 */
describe('usage and limits (distributed)', () => {
  let topology: Topology;
  let c: UsageJourneyContext;
  let nc: NatsConnection | undefined;
  const hourStart = (d: Date) => new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000).toISOString();

  beforeAll(async () => {
    topology = await startDistributed({ gateway: { USAGE_BLOCKING_REFRESH_MS: '1000' } });
    c = await usageSetup(topology);
    await runWorkload(c);
  }, 300_000);

  afterAll(async () => {
    await nc?.close().catch(() => undefined);
    await topology?.stop();
  }, 60_000);

  it('meters the workload, and an event delivered twice once', async () => {
    const from = hourStart(c.startedAt);
    await usageReaches(
      c,
      { resources: WORKLOAD.resources, searches_performed: WORKLOAD.searches, answers_generated: WORKLOAD.answers },
      { knowledgebox: c.kb, from, aggregation: 'hour' },
      'the KB workload metered',
    );

    const nats = topology.nats as NonNullable<Topology['nats']>;
    nc = await connect({ servers: nats.url, ...nats.credentials('content'), maxReconnectAttempts: 0, inboxPrefix: '_INBOX.content' });
    const duplicated: AuditRecordedEvent = {
      event_id: randomUUID(),
      kbid: c.kb,
      type: 'search',
      date: new Date().toISOString(),
      user_type: 'nuakey',
      details: { query: 'twice' },
    };
    const js = nc.jetstream();
    const body = new TextEncoder().encode(JSON.stringify(duplicated));
    // Two messages in the stream (distinct message ids), the same event.
    await js.publish(nats.prefix + ContentSubjects.auditRecorded.subject, body, { msgID: randomUUID() });
    await js.publish(nats.prefix + ContentSubjects.auditRecorded.subject, body, { msgID: randomUUID() });
    // A later event: once it is counted, both deliveries before it have been handled.
    const later: AuditRecordedEvent = {
      ...duplicated,
      event_id: randomUUID(),
      type: 'chat',
      details: { question: 'q', answer: 'a' },
      date: new Date(Date.now() + 1).toISOString(),
    };
    await js.publish(nats.prefix + ContentSubjects.auditRecorded.subject, new TextEncoder().encode(JSON.stringify(later)), {
      msgID: randomUUID(),
    });
    await usageReaches(
      c,
      { answers_generated: WORKLOAD.answers + 1 },
      { knowledgebox: c.kb, from, aggregation: 'day' },
      'the later event metered',
    );
    await usageReaches(
      c,
      { searches_performed: WORKLOAD.searches + 1, answers_generated: WORKLOAD.answers + 1 },
      { knowledgebox: c.kb, from, aggregation: 'day' },
      'the duplicate counted once',
    );
  });

  it('refuses searches past the limit with 402 through the gateway process, and serves them again when the limit is raised', async () => {
    const setLimits = (usage: Record<string, number>) =>
      c.http.call('PUT', `/api/v1/account/${c.account}/limits`, { credential: c.root, body: { usage } });
    // Searches so far this month on the account: the workload, its second KB's one, and the duplicated one.
    expect((await setLimits({ monthly_limit_hosted_searches_performed: WORKLOAD.searches + 2 })).status).toBe(200);
    await c.http.eventually(
      async () => {
        const r = await c.http.call('POST', `/api/v1/kb/${c.kb}/find`, { credential: c.manager, body: { query: 'storm' } });
        return r.status === 402 ? true : undefined;
      },
      30_000,
      'a search refused',
    );
    const blocked = await c.http.eventually(
      async () => {
        const a = await c.http.call<Account>('GET', `/api/v1/account/${c.account}`, { credential: c.root });
        return a.body.blocking_state === 'quota' ? a.body : undefined;
      },
      30_000,
      'the account blocked',
    );
    expect(blocked.blocked_features).toEqual(['search']);
    expect((await setLimits({ monthly_limit_hosted_searches_performed: 1_000_000 })).status).toBe(200);
    await c.http.eventually(
      async () => {
        const r = await c.http.call('POST', `/api/v1/kb/${c.kb}/find`, { credential: c.manager, body: { query: 'storm' } });
        return r.status === 200 ? true : undefined;
      },
      30_000,
      'searches served again',
    );
    await c.http.eventually(
      async () => {
        const a = await c.http.call<Account>('GET', `/api/v1/account/${c.account}`, { credential: c.root });
        return a.body.blocking_state === 'unblocked' ? true : undefined;
      },
      30_000,
      'the account unblocked',
    );
  });

  it("meters the predict API (a KB's calls, a key's under its account) and refuses self-hosted searches past their limit", async () => {
    await predictUsageJourney(c);
  }, 180_000);
});
