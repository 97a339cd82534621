import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AuditRecordedEvent } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import type { AuditService } from '../src/audit/audit.service';
import { reportingServices } from './usage-fakes';
import { REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';

jest.setTimeout(60_000);

describe('AuditService on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kb-reporting-'));
  let ds: DataSource;
  let audit: AuditService;
  const kbid = randomUUID();
  const event = (i: number, extra: Partial<AuditRecordedEvent> = {}): AuditRecordedEvent => ({
    event_id: `e${i}`,
    kbid,
    type: 'new',
    date: new Date(Date.UTC(2026, 10, 22, 10, 0, i)).toISOString(),
    resource_id: `r${i}`,
    total_duration: i,
    audit_metadata: { i },
    ...extra,
  });

  beforeAll(async () => {
    ds = await createServiceDataSource({
      service: 'reporting',
      schema: 'reporting',
      entities: REPORTING_ENTITIES,
      migrations: REPORTING_MIGRATIONS,
      dataDir,
      runMigrations: true,
    });
    audit = reportingServices(ds).audit;
  });

  afterAll(async () => {
    await closeServiceDataSource(ds);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stores concurrent events (batched into few statements) exactly once each, in order, with every member', async () => {
    await Promise.all(
      [1, 2, 3, 4, 5].map((i) => audit.record(event(i, i === 2 ? { user_id: 'u', user_type: 'user', client_type: 'api' } : {}))),
    );
    // Redelivered events (the bus delivers at least once) are not stored again, alone or in a batch.
    await Promise.all([audit.record(event(1)), audit.record(event(2)), audit.record(event(6))]);
    expect(await audit.count({ kbid })).toEqual({ count: 6 });
    const listed = await audit.list({ kbid });
    expect(listed.map((e) => e.event_id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    expect(listed[1]).toEqual({ ...event(2), user_id: 'u', user_type: 'user', client_type: 'api' });
    expect(listed[0]).toEqual(event(1));
  });

  it('fails only the bad event of a batch', async () => {
    const results = await Promise.allSettled([
      audit.record(event(7)),
      audit.record(event(8, { kbid: 'not-a-uuid' })),
      audit.record(event(9)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await audit.list({ kbid })).map((e) => e.event_id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e9']);
  });
});
