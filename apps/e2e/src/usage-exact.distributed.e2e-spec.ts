import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { ContentSubjects } from '@kb/contracts';
import { startDistributed, type Topology } from './support/topologies';
import { expectDeletedKbUsage, expectExact, storeMatches, runExactWorkload, settledUsage, type ExactRun } from './usage-exact-journey';

/**
 * Exact usage counts across processes (issue 19): the workload of usage-exact-journey with the
 * reporting process killed in the middle of it (SIGKILL: what it had claimed and not acknowledged
 * is delivered again) and work going on while it is down, and one event published twice on
 * JetStream meanwhile (distinct message ids, the same event).
 */
describe('usage counted exactly (distributed)', () => {
  let topology: Topology;
  let run: ExactRun;
  let nc: NatsConnection | undefined;

  beforeAll(async () => {
    // Exact counts need every request served: a search timed out at the gateway (504) may still be
    // counted. Cold searches on a loaded shared machine took over the default 15 s.
    const slow = { BUS_REQUEST_TIMEOUT_MS: '120000' };
    topology = await startDistributed({ gateway: slow, content: slow, reporting: slow });
    const nats = topology.nats as NonNullable<Topology['nats']>;
    nc = await connect({ servers: nats.url, ...nats.credentials('content'), maxReconnectAttempts: 0, inboxPrefix: '_INBOX.content' });
    const js = nc.jetstream();
    run = await runExactWorkload(topology, async (event) => {
      const body = new TextEncoder().encode(JSON.stringify(event));
      for (let i = 0; i < 2; i++) await js.publish(nats.prefix + ContentSubjects.auditRecorded.subject, body, { msgID: randomUUID() });
    });
  }, 420_000);

  afterAll(async () => {
    await nc?.close().catch(() => undefined);
    await topology?.stop();
  }, 60_000);

  it("gives exactly the workload's numbers, the duplicate counted once, across the restart", async () => {
    const { totals } = await settledUsage(run);
    expectExact(totals, run.keptBytes, await storeMatches(topology, run, totals['storage_bytes'] ?? -1));
    // Then the KB is deleted: its data goes, the account's counters stay.
    await expectDeletedKbUsage(run, totals);
  }, 300_000);
});
