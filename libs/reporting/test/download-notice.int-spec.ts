import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCodes, RequestActivityDownloadRequest, validatePayload } from '@kb/contracts';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { DEFAULT_REPORTING_OPTIONS, REPORTING_ENTITIES, REPORTING_MIGRATIONS } from '../src';
import { ActivityService } from '../src/activity/activity.service';
import { ActivityDownloadsService } from '../src/downloads/activity-downloads.service';
import { reportingServices } from './usage-fakes';

jest.setTimeout(60_000);

/**
 * The e-mail notice of a ready activity download, through a real SMTP server on loopback
 * (smtp-server): sent once the file is written, to the address of the request, with a working
 * signed link; refused (422) when no SMTP is configured or no address is given, and nothing stored.
 */
describe('the e-mail notice of a ready activity download', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kb-download-notice-'));
  const blobRoot = mkdtempSync(join(tmpdir(), 'kb-download-notice-blobs-'));
  const kbid = randomUUID();
  const month = new Date().toISOString().slice(0, 7);
  const mails: { to: string[]; raw: string }[] = [];
  let smtp: SMTPServer;
  let ds: DataSource;
  let blobs: BlobStore;
  let withSmtp: ActivityDownloadsService;
  let withoutSmtp: ActivityDownloadsService;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, done) {
        let raw = '';
        stream.on('data', (c: Buffer) => (raw += c.toString()));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
          done();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    const port = (smtp.server.address() as AddressInfo).port;
    ds = await createServiceDataSource({
      service: 'reporting',
      schema: 'reporting',
      entities: REPORTING_ENTITIES,
      migrations: REPORTING_MIGRATIONS,
      dataDir,
      runMigrations: true,
    });
    blobs = await createBlobStore({
      driver: 'fs',
      root: blobRoot,
      signingSecret: randomBytes(32).toString('hex'),
      publicBaseUrl: 'http://kb.test',
    });
    const activity = new ActivityService(ds, DEFAULT_REPORTING_OPTIONS);
    const options = { ...DEFAULT_REPORTING_OPTIONS, downloadPollMs: 0 };
    withSmtp = new ActivityDownloadsService(
      ds,
      { ...options, smtp: { url: `smtp://127.0.0.1:${port}?ignoreTLS=true`, from: 'kb@kb.test' } },
      blobs,
      activity,
    );
    withoutSmtp = new ActivityDownloadsService(ds, options, blobs, activity);
    const { audit } = reportingServices(ds);
    for (let i = 0; i < 3; i++)
      await audit.record({
        event_id: `n${i}`,
        kbid,
        type: 'search',
        date: new Date(Date.now() - i * 1000).toISOString(),
        details: { query: `q${i}` },
      });
  });

  afterAll(async () => {
    await withSmtp?.onModuleDestroy();
    await withoutSmtp?.onModuleDestroy();
    if (ds) await closeServiceDataSource(ds);
    await blobs?.close();
    await new Promise<void>((r) => smtp.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(blobRoot, { recursive: true, force: true });
  });

  const stored = async (): Promise<number> => Number((await ds.query(`SELECT count(*)::int AS n FROM reporting.activity_downloads`))[0].n);
  /** As the gateway and the bus deliver it: the payload checked by its contract. */
  const requestOn = async (service: ActivityDownloadsService, payload: unknown) =>
    service.request(validatePayload(RequestActivityDownloadRequest, payload));
  const body = (extra: Record<string, unknown>) => ({ year_month: month, filters: {}, ...extra });

  it('is refused without SMTP (422 on notify_via_email) and without an address (422 on email_address); nothing stored', async () => {
    await expect(
      requestOn(withoutSmtp, {
        kbid,
        event_type: 'search',
        format: 'ndjson',
        body: body({ notify_via_email: true, email_address: 'me@example.com' }),
      }),
    ).rejects.toMatchObject({ details: { detail: [{ loc: ['body', 'notify_via_email'], type: 'value_error' }] } });
    await expect(
      requestOn(withSmtp, { kbid, event_type: 'search', format: 'ndjson', body: body({ notify_via_email: true }) }),
    ).rejects.toMatchObject({ details: { detail: [{ loc: ['body', 'email_address'], type: 'missing' }] } });
    expect(await stored()).toBe(0);
  });

  it('sends one notice with a working link once the file is written, to the address asked, and none when not asked', async () => {
    const asked = await requestOn(withSmtp, {
      kbid,
      event_type: 'search',
      format: 'csv',
      body: body({ notify_via_email: true, email_address: 'me@example.com' }),
    });
    const silent = await requestOn(withSmtp, {
      kbid,
      event_type: 'search',
      format: 'ndjson',
      body: body({ email_address: 'other@example.com' }),
    });
    expect(mails).toHaveLength(0);
    await withSmtp.drain();
    expect((await withSmtp.status({ kbid, request_id: asked.request_id })).status).toBe('done');
    expect((await withSmtp.status({ kbid, request_id: silent.request_id })).status).toBe('done');
    expect(mails).toHaveLength(1);
    expect(mails[0]?.to).toEqual(['me@example.com']);
    const text = (mails[0]?.raw ?? '').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    expect(text).toContain('3 search records of ' + month);
    const link = /https?:\/\/\S+/.exec(text)?.[0] ?? '';
    const url = new URL(link);
    // The gateway's signed blob route: this store accepts the link for the download's file.
    const key = decodeURIComponent(url.pathname.replace(/^\/api\/v1\/blobs\//, ''));
    expect(key).toBe(`reporting/kbs/${kbid}/activity-downloads/${asked.request_id}.csv`);
    expect(blobs.verifyPresignedGet(key, url.searchParams)).toMatchObject({ valid: true });
    const [row] = await ds.query(`SELECT notified_at IS NOT NULL AS sent FROM reporting.activity_downloads WHERE request_id = $1`, [
      asked.request_id,
    ]);
    expect(row.sent).toBe(true);
  });

  it('prepares at most 5 downloads of a KB at once: the sixth is 429 with try_after, accepted again once they are done', async () => {
    const busy = randomUUID();
    const ask = () => requestOn(withoutSmtp, { kbid: busy, event_type: 'search', format: 'ndjson', body: body({}) });
    for (let i = 0; i < 5; i++) await ask();
    const refused = await ask().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe(ErrorCodes.RATE_LIMITED);
    const tryAfter = ((refused as DomainError).details as { try_after: number }).try_after;
    const now = Math.ceil(Date.now() / 1000);
    expect(tryAfter).toBeGreaterThan(now);
    expect(tryAfter).toBeLessThanOrEqual(now + 11);
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM reporting.activity_downloads WHERE kbid = $1`, [busy]);
    expect(row.n).toBe(5);
    await withoutSmtp.drain();
    await expect(ask()).resolves.toMatchObject({ request_id: expect.any(String) });
    await withoutSmtp.drain();
  });

  it('holds the limit of 5 under concurrent requests: of 12 at once exactly 5 are recorded, the rest 429', async () => {
    const busy = randomUUID();
    const ask = () => withoutSmtp.request({ kbid: busy, event_type: 'search', format: 'ndjson', body: body({}) });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, ask));
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as DomainError);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(refused.map((e) => e.code)).toEqual(Array(7).fill(ErrorCodes.RATE_LIMITED));
    const [row] = await ds.query(`SELECT count(*)::int AS n FROM reporting.activity_downloads WHERE kbid = $1`, [busy]);
    expect(row.n).toBe(5);
    await withoutSmtp.drain();
  });
});
