import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes, type ActivityQueryItem, type AuditRecordedEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { createTestDatabase, type TestDatabase } from '@kb/platform/testing';
import { DEFAULT_REPORTING_OPTIONS, REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { ActivityService } from '../src/activity/activity.service';
import type { AuditService } from '../src/audit/audit.service';
import { ChainSealerService } from '../src/chain/chain-sealer.service';
import { ChainVerifyService } from '../src/chain/chain-verify.service';
import { verifyExport } from '../src/chain/chain-export';
import { reportingServices } from './usage-fakes';

jest.setTimeout(60_000);

/** Real PostgreSQL (distributed topology) and the embedded PGlite (standalone). */
const BACKENDS = {
  PostgreSQL: () => {
    let db: TestDatabase | undefined;
    return {
      open: async () => {
        db = await createTestDatabase('chain');
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
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-chain-'));
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

describe.each(Object.entries(BACKENDS))('the activity log hash chains on %s', (_name, backend) => {
  const b = backend();
  let ds: DataSource;
  let audit: AuditService;
  let sealer: ChainSealerService;
  let verifier: ChainVerifyService;
  let activity: ActivityService;
  const kbid = randomUUID();
  const other = randomUUID();
  const ev = (i: number, type: AuditRecordedEvent['type'], kb = kbid, extra: Partial<AuditRecordedEvent> = {}): AuditRecordedEvent => ({
    event_id: `${type}-${i}-${kb.slice(0, 4)}`,
    kbid: kb,
    type,
    date: new Date(Date.UTC(2026, 10, 3, 10, i, 0)).toISOString(),
    user_id: `u${i % 3}`,
    user_type: 'user',
    client_type: 'api',
    resource_id: `r${i}`,
    audit_metadata: { n: i, nested: { b: 2, a: 1 } },
    ...extra,
  });
  const sealAll = () => sealer.sealAll();

  beforeAll(async () => {
    ds = await b.open();
    const svc = reportingServices(ds);
    audit = svc.audit;
    sealer = svc.sealer;
    verifier = new ChainVerifyService(ds);
    activity = new ActivityService(ds, DEFAULT_REPORTING_OPTIONS);
    // Starting PGlite and migrating took over 40 s on a loaded 2-core machine (once over the 60 s default here).
  }, 180_000);

  afterAll(async () => {
    if (ds) await closeServiceDataSource(ds);
    await b.cleanup();
  });

  it('seals every stored record into the chain of its KB and type, and verifies it whole and in slices', async () => {
    await Promise.all(Array.from({ length: 30 }, (_, i) => audit.record(ev(i, 'visited'))));
    await Promise.all([
      audit.record(ev(1, 'search', kbid, { details: { query: 'tides', filters: ['/l/a'] } })),
      audit.record(ev(1, 'visited', other)),
    ]);
    const before = await verifier.verify({ kbid, event_type: 'visited' });
    expect(before).toMatchObject({ verified: 0, head: null, unsealed: 30, broken: null });
    await sealAll();
    const whole = await verifier.verify({ kbid, event_type: 'visited' });
    expect(whole).toMatchObject({ verified: 30, unsealed: 0, broken: null, next_seq: null });
    expect(whole.last).toEqual(whole.head);
    expect(whole.head?.seq).toBe(30);
    expect(await verifier.verify({ kbid, event_type: 'search' })).toMatchObject({ verified: 1, broken: null });
    expect(await verifier.verify({ kbid: other, event_type: 'visited' })).toMatchObject({ verified: 1, broken: null });
    // In slices: each resumes from the stored hash of the record before it.
    const first = await verifier.verify({ kbid, event_type: 'visited', limit: 12 });
    expect(first).toMatchObject({ verified: 12, broken: null, next_seq: 13 });
    expect(await verifier.verify({ kbid, event_type: 'visited', from_seq: 13, limit: 100 })).toMatchObject({
      verified: 18,
      broken: null,
      next_seq: null,
    });
    // Records stored later continue the chain.
    await audit.record(ev(40, 'visited'));
    await sealAll();
    expect(await verifier.verify({ kbid, event_type: 'visited' })).toMatchObject({ verified: 31, broken: null, head: { seq: 31 } });
  });

  it('runs two verifications at once and refuses a third with 429 and try_after, then accepts again', async () => {
    const calls = [0, 1, 2].map(() => verifier.verify({ kbid, event_type: 'visited' }));
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const err = (outcomes[2] as PromiseRejectedResult).reason as DomainError;
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe(ErrorCodes.RATE_LIMITED);
    expect((err.details as { try_after: number }).try_after).toBeGreaterThan(Math.floor(Date.now() / 1000));
    await expect(verifier.verify({ kbid, event_type: 'visited' })).resolves.toMatchObject({ broken: null });
  });

  it('reports the first record altered in the database, a record removed, and a truncated end', async () => {
    await ds.query(
      `UPDATE reporting.activity_events SET details = jsonb_set(details, '{note}', '"edited"') WHERE kbid = $1 AND type = 'visited' AND chain_seq = 7`,
      [kbid],
    );
    expect(await verifier.verify({ kbid, event_type: 'visited' })).toMatchObject({
      verified: 6,
      broken: { seq: 7, reason: 'hash_mismatch', event_id: expect.any(String) },
    });
    await ds.query(
      `UPDATE reporting.activity_events SET details = details - 'note' WHERE kbid = $1 AND type = 'visited' AND chain_seq = 7`,
      [kbid],
    );
    expect(await verifier.verify({ kbid, event_type: 'visited' })).toMatchObject({ verified: 31, broken: null });
    // Member order inside JSON does not matter; a changed user does.
    await ds.query(
      `UPDATE reporting.activity_events SET user_id = 'someone-else' WHERE kbid = $1 AND type = 'visited' AND chain_seq = 20`,
      [kbid],
    );
    expect((await verifier.verify({ kbid, event_type: 'visited' })).broken).toMatchObject({ seq: 20, reason: 'hash_mismatch' });
    await ds.query(`DELETE FROM reporting.activity_events WHERE kbid = $1 AND type = 'visited' AND chain_seq = 20`, [kbid]);
    expect((await verifier.verify({ kbid, event_type: 'visited' })).broken).toEqual({ seq: 20, reason: 'missing_record' });
    await ds.query(`DELETE FROM reporting.activity_events WHERE kbid = $1 AND type = 'search'`, [kbid]);
    expect((await verifier.verify({ kbid, event_type: 'search' })).broken).toEqual({ seq: 1, reason: 'missing_record' });
    await ds.query(`DELETE FROM reporting.activity_events WHERE kbid = $1 AND type = 'visited' AND chain_seq = 1`, [other]);
    expect((await verifier.verify({ kbid: other, event_type: 'visited' })).broken).toEqual({ seq: 1, reason: 'missing_record' });
  });

  it('exports a log that a third party verifies offline, and refuses bad requests', async () => {
    const kb = randomUUID();
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        audit.record(ev(i, 'chat', kb, { details: { question: `q${i}`, answer: 'a', retrieved_context: [{ key: 'k', text: 't' }] } })),
      ),
    );
    await sealAll();
    const show = [
      'event_id',
      'date',
      'user_id',
      'user_type',
      'client_type',
      'total_duration',
      'resource_id',
      'audit_metadata',
      'details',
      'learning_id',
      'chain_seq',
      'chain_hash',
    ];
    const lines: string[] = [];
    for await (const item of activity.query({
      kbid: kb,
      event_type: 'chat',
      body: { year_month: '2026-11', show, filters: {}, pagination: { limit: 100 } },
    }) as AsyncIterable<ActivityQueryItem>) {
      if (item.type === 'record') lines.push(JSON.stringify(item.record));
    }
    expect(lines).toHaveLength(5);
    const head = (await verifier.verify({ kbid: kb, event_type: 'chat' })).head?.hash;
    expect(verifyExport([...lines].reverse(), kb, 'chat', { head })).toMatchObject({ records: 5, verified: 5, broken: null });
    const edited = lines.map((l, i) => (i === 2 ? l.replace('"q', '"Q') : l));
    expect(verifyExport(edited, kb, 'chat').broken).toMatchObject({ reason: 'hash_mismatch' });
    expect(
      verifyExport(
        lines.filter((l) => JSON.parse(l).chain_seq !== 1),
        kb,
        'chat',
      ).broken,
    ).toMatchObject({ seq: 1, reason: 'missing_record' });
    expect(
      verifyExport(
        lines.filter((l) => JSON.parse(l).chain_seq !== 5),
        kb,
        'chat',
        { head },
      ).broken,
    ).toMatchObject({ seq: 5, reason: 'head_mismatch' });
    expect(verifyExport(lines, kb, 'chat', { head: 'f'.repeat(64) }).broken).toMatchObject({ reason: 'head_mismatch' });
    expect(verifyExport(lines, kb, 'search').broken).toMatchObject({ reason: 'hash_mismatch' }); // another chain

    await expect(verifier.verify({ kbid: kb, event_type: 'nope', from_seq: 0, limit: 2_000_000 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { detail: [{ loc: ['path', 'event_type'] }, { loc: ['query', 'from_seq'] }, { loc: ['query', 'limit'] }] },
    });
  });
});
