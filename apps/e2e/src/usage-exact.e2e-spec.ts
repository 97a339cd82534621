import { randomUUID } from 'node:crypto';
import { startStandalone, type Topology } from './support/topologies';
import { expectDeletedKbUsage, expectExact, storeMatches, runExactWorkload, settledUsage, type ExactRun } from './usage-exact-journey';

/**
 * Exact usage counts in one process (issue 19): the workload of usage-exact-journey with the
 * process restarted in the middle, and one event delivered twice — two messages carrying it put on
 * the stopped process's durable bus (its `bus.jobs` table) for the reporting consumer, as a
 * publisher retrying after a lost acknowledgement would leave them.
 */
describe('usage counted exactly (standalone)', () => {
  let topology: Topology;
  let run: ExactRun;

  beforeAll(async () => {
    // Exact counts need every request served: a search timed out at the gateway (504) may still be
    // counted. Cold searches on a loaded shared machine took over the default 15 s.
    topology = await startStandalone({ BUS_REQUEST_TIMEOUT_MS: '120000' });
    run = await runExactWorkload(topology, async (event, db) => {
      const query = db.query as NonNullable<typeof db.query>;
      const consumers = await query(`SELECT subject FROM bus.consumers WHERE consumer = 'reporting-audit'`);
      expect(consumers).toHaveLength(1);
      for (let i = 0; i < 2; i++) {
        const rows = await query(
          `INSERT INTO bus.jobs (msg_id, subject, consumer, body) VALUES ($1, $2, 'reporting-audit', $3) RETURNING id`,
          [randomUUID(), consumers[0]?.['subject'], JSON.stringify(event)],
        );
        expect(rows).toHaveLength(1);
      }
    });
  }, 420_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  it("gives exactly the workload's numbers, the duplicate counted once, across the restart", async () => {
    const { totals } = await settledUsage(run);
    expectExact(totals, run.keptBytes, await storeMatches(topology, run, totals['storage_bytes'] ?? -1));
    // Then the KB is deleted: its data goes, the account's counters stay.
    await expectDeletedKbUsage(run, totals);
  }, 300_000);
});
