import { createHash, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { createBlobStore } from '@kb/platform/storage';
import type { AuditRecordedEvent } from '@kb/contracts';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import type { Topology } from './support/topologies';
import { totalsOf } from './usage-journey';

type Bucket = { timestamp: string; metrics: { name: string; value: number; details: unknown[] }[] };
type ChainReport = { verified: number; unsealed: number; broken: unknown };
type Totals = Record<string, number>;

/**
 * Exact counting (issue 19): a known workload, the reporting service restarted in the middle of
 * it, one event delivered twice on the bus, and Get Usage giving exactly those numbers — read only
 * once every stored event is sealed (sealing is what counts), so a late double count cannot hide.
 *
 * Workload, all on the bootstrap KB: 3 text resources and 2 uploaded files (5 resources created
 * and processed, one file resource then deleted), 4 searches, 2 answers, and one search event
 * published twice by the test (same event id).
 */
export const EXACT = { texts: 3, files: 2, deleted: 1, searches: 4, answers: 2 } as const;

export interface ExactRun {
  http: HttpClient;
  account: string;
  kb: string;
  manager: NonNullable<Credential>;
  root: NonNullable<Credential>;
  from: string;
  /** Bytes of the uploaded file that stays. */
  keptBytes: number;
  /** The duplicated event. */
  duplicate: AuditRecordedEvent;
}

/** Publishes `event` twice on the bus, two distinct messages carrying the same event. */
export type PublishTwice = (
  event: AuditRecordedEvent,
  db: { query?: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]> },
) => Promise<void>;

const TEXTS = [
  'A storm brings rain, wind and thunder over the sea.',
  'Cats sleep most of the day and hunt at night.',
  'Bread rises when yeast ferments the dough.',
];

export async function runExactWorkload(topology: Topology, publishTwice: PublishTwice): Promise<ExactRun> {
  const http = topology.http;
  const boot = topology.bootstrap();
  const manager = apiKey(boot.api_key.token);
  const root = bearer(boot.personal_access_token.token);
  const kb = boot.kb.id;
  const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
  const upload = async (bytes: Buffer): Promise<string> => {
    const res = await fetch(`${http.baseUrl}/api/v1/kb/${kb}/upload`, {
      method: 'POST',
      headers: {
        [manager.header]: manager.value,
        'content-type': 'text/plain',
        'x-filename': `${randomUUID()}.txt`,
        'x-md5': createHash('md5').update(bytes).digest('hex'),
      },
      body: new Uint8Array(bytes),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { uuid: string }).uuid;
  };
  const search = async (query: string) =>
    expect((await http.call('POST', `/api/v1/kb/${kb}/find`, { credential: manager, body: { query } })).status).toBe(200);
  const ask = async (query: string) =>
    expect(
      (await http.call('POST', `/api/v1/kb/${kb}/ask`, { credential: manager, headers: { 'x-synchronous': 'true' }, body: { query } }))
        .status,
    ).toBe(200);

  const processed = (n: number) =>
    http.eventually(
      async () => {
        const list = await http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: manager,
        });
        return list.body.resources.length === n && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      180_000,
      `${n} resources processed`,
    );

  // Before the restart: two texts, both files (processed first: searches under a loaded machine's
  // processing can time out), two searches, one answer — their events not waited for.
  for (const [i, body] of TEXTS.slice(0, 2).entries()) {
    expect(
      (await http.call('POST', `/api/v1/kb/${kb}/resources`, { credential: manager, body: { title: `t${i}`, texts: { body: { body } } } }))
        .status,
    ).toBe(201);
  }
  const kept = Buffer.from('Owls hunt mice at night and sleep by day.\n');
  await upload(kept);
  const doomed = await upload(Buffer.from('Foxes are clever and quick.\n'.repeat(5)));
  await processed(4);
  await search('storm rain');
  await search('cats');
  await ask('What does a storm bring?');

  // The restart, with the duplicate delivered meanwhile (distributed: into JetStream while reporting is down).
  const duplicate: AuditRecordedEvent = {
    event_id: randomUUID(),
    kbid: kb,
    type: 'search',
    date: new Date().toISOString(),
    user_type: 'nuakey',
    details: { query: 'twice' },
  };
  await topology.restartReporting((db) => publishTwice(duplicate, db));

  // After it: the last text, two searches, one answer.
  expect(
    (
      await http.call('POST', `/api/v1/kb/${kb}/resources`, {
        credential: manager,
        body: { title: 't2', texts: { body: { body: TEXTS[2] } } },
      })
    ).status,
  ).toBe(201);
  await search('bread');
  await search('owls');
  await ask('When do cats hunt?');

  await processed(EXACT.texts + EXACT.files);
  expect((await http.call('DELETE', `/api/v1/kb/${kb}/resource/${doomed}`, { credential: manager })).status).toBe(204);
  return { http, account: boot.account.id, kb, manager, root, from, keptBytes: kept.length, duplicate };
}

/** Every stored event of these types sealed (so counted), with these many stored of each. */
async function allSealed(run: ExactRun, stored: Record<string, number>): Promise<boolean> {
  for (const [type, n] of Object.entries(stored)) {
    const r = await run.http.call<ChainReport>('GET', `/api/v1/kb/${run.kb}/activity/${type}/verify`, { credential: run.manager });
    expect(r.status).toBe(200);
    expect(r.body.broken).toBeNull();
    if (r.body.unsealed !== 0 || r.body.verified !== n) return false;
  }
  return true;
}

/** Waits (deadline, no fixed sleep) until everything is stored and sealed, then returns Get Usage's totals and buckets. */
export async function settledUsage(run: ExactRun): Promise<{ totals: Totals; buckets: Bucket[] }> {
  const { http } = run;
  const created = EXACT.texts + EXACT.files;
  // Stored events: each search once (the duplicate too), one answer each, one `new` per resource, one `processed` per field.
  const stored = {
    search: EXACT.searches + 1,
    chat: EXACT.answers,
    new: created,
    deleted: EXACT.deleted,
    processed: created,
    indexed: created,
  };
  await http.eventually(async () => ((await allSealed(run, stored)) ? true : undefined), 120_000, 'every stored event sealed');
  const res = await http.call<Bucket[]>(
    'GET',
    `/api/v1/account/${run.account}/usage?${new URLSearchParams({ knowledgebox: run.kb, from: run.from, aggregation: 'hour' }).toString()}`,
    { credential: run.root },
  );
  expect(res.status).toBe(200);
  return { totals: totalsOf(res.body), buckets: res.body };
}

/**
 * The bytes the KB's resources really take in the blob store the topology's apps share: every
 * object under the KB's resources summed (the uploaded file, each field's extracted JSON,
 * thumbnails), read through the store itself (the fs driver keeps a trailer in each file).
 * Waits (deadline) until it equals `metered`: the deleted resource's objects go through content's
 * outbox just after its write commits.
 */
export async function storeMatches(topology: Topology, run: ExactRun, metered: number): Promise<number> {
  const objects = topology.blobObjectsDir;
  if (!objects) throw new Error(`${topology.name}: no blob store directory to measure`);
  const store = await createBlobStore({
    driver: 'fs',
    root: dirname(objects),
    signingSecret: 'x'.repeat(32),
    publicBaseUrl: 'http://localhost',
  });
  const held = async (): Promise<number> => {
    let total = 0;
    for await (const item of store.list(`content/kbs/${run.kb}/r/`)) total += item.size;
    return total;
  };
  return run.http
    .eventually(async () => ((await held()) === metered ? metered : undefined), 30_000, 'the blob store holding the metered bytes')
    .catch(async (err: unknown) => {
      throw new Error(`storage_bytes is ${metered}, the blob store holds ${await held()} bytes of the KB's resources (${String(err)})`);
    });
}

/** The exact numbers of the workload; `storedBytes` is what the blob store holds for the KB's resources. */
export function expectExact(totals: Totals, keptBytes: number, storedBytes: number): void {
  const created = EXACT.texts + EXACT.files;
  expect(totals).toMatchObject({
    resources: created - EXACT.deleted,
    searches_performed: EXACT.searches + 1,
    answers_generated: EXACT.answers,
    docs_no_media_processed: created,
    non_media_files_processed: EXACT.files,
    media_seconds_processed: 0,
    storage_bytes: storedBytes,
  });
  // Besides the kept upload: the processing artefacts of its field and of the texts (extracted JSON).
  expect(storedBytes).toBeGreaterThan(keptBytes);
  // Each field's paragraphs are processed and stored once.
  expect(totals['paragraphs_stored']).toBe(totals['paragraphs_processed']);
  expect(totals['paragraphs_processed']).toBeGreaterThanOrEqual(created);
  expect(totals['chars_processed']).toBeGreaterThan(100);
  // Seconds of extraction: measured, so only known to be there.
  expect(totals['pre_processing_time']).toBeGreaterThan(0);
}

/**
 * The KB deleted through the gateway: reporting deletes its data (Get Usage of it 404, its activity
 * gone with it) while the account keeps what the KB did — only what it held (`resources`,
 * `storage_bytes`) leaves the account's totals.
 */
export async function expectDeletedKbUsage(run: ExactRun, before: Totals): Promise<void> {
  const { http } = run;
  const usageOf = (query: Record<string, string>) =>
    http.call<Bucket[]>(
      'GET',
      `/api/v1/account/${run.account}/usage?${new URLSearchParams({ from: run.from, aggregation: 'hour', ...query }).toString()}`,
      { credential: run.root },
    );
  expect((await http.call('DELETE', `/api/v1/account/${run.account}/kb/${run.kb}`, { credential: run.root })).status).toBe(204);
  await http.eventually(
    async () => ((await usageOf({ knowledgebox: run.kb })).status === 404 ? true : undefined),
    60_000,
    'Get Usage of the deleted KB 404',
  );
  const account = await http.eventually(
    async () => {
      const totals = totalsOf((await usageOf({})).body);
      return totals['resources'] === 0 ? totals : undefined;
    },
    60_000,
    "the deleted KB's rows gone from the account",
  );
  expect(account).toEqual({ ...before, resources: 0, storage_bytes: 0 });
}
