import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyOnnxModel } from '@kb/platform/testing';
import { apiKey, bearer, type Credential } from './support/http-client';
import { REPO_ROOT } from './support/processes';
import { startStandalone, type Topology } from './support/topologies';

type Row = Record<string, unknown>;

/**
 * The activity log through the gateway (spec 4.4, 6.1): a known workload — resources written and
 * read with an API key and with a user token, a search, an answer and its feedback, a semantic model
 * added (a KB task) — then each event type queried with its members, who acted as what, the answer's
 * details, filters and pages, and the limits of who may ask.
 */
describe('activity log (standalone)', () => {
  let topology: Topology;
  let modelDir: string;
  let kb: string;
  let otherKb: string;
  let manager: NonNullable<Credential>;
  let reader: NonNullable<Credential>;
  let userToken: NonNullable<Credential>;
  let pat: NonNullable<Credential>;
  let userId: string;
  let learningId: string;
  const month = new Date().toISOString().slice(0, 7);

  /** The query route answers NDJSON, one record per line, and says in `has-more` whether more follow. */
  const query = async (
    eventType: string,
    body: Row,
    credential: Credential = manager,
    kbid = kb,
  ): Promise<{ status: number; records: Row[]; hasMore: string | null; type: string | null; text: string }> => {
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kbid}/activity/${eventType}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(credential ? { [credential.header]: credential.value } : {}) },
      body: JSON.stringify({ year_month: month, filters: {}, ...body }),
    });
    const text = await res.text();
    const records =
      res.status === 200
        ? text
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Row)
        : [];
    return { status: res.status, records, hasMore: res.headers.get('has-more'), type: res.headers.get('content-type'), text };
  };
  const eventually = <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => topology.http.eventually(probe, 60_000, what);
  const atLeast = (eventType: string, n: number, body: Row = {}): Promise<Row[]> =>
    eventually(async () => {
      const r = await query(eventType, { show: 'all', pagination: { limit: 100 }, ...body });
      return r.records.length >= n ? r.records : undefined;
    }, `${n} ${eventType} events`);

  beforeAll(async () => {
    modelDir = mkdtempSync(join(tmpdir(), 'kb-e2e-activity-'));
    writeTinyOnnxModel(join(modelDir, 'topics'), { topics: { animals: ['cats', 'dogs'], weather: ['rain', 'storm'] } });
    topology = await startStandalone({ EMBEDDING_MODEL_DIR: modelDir });
    const boot = topology.bootstrap();
    kb = boot.kb.id;
    userId = boot.user.id;
    manager = apiKey(boot.api_key.token);
    pat = bearer(boot.personal_access_token.token);
    const login = await topology.http.call<{ token: string }>('POST', '/api/v1/auth/login', {
      body: { email: boot.user.email, password: boot.user.password },
    });
    userToken = bearer(login.body.token);
    const sa = await topology.http.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${kb}/service_accounts`, {
      credential: pat,
      body: { title: 'reader', role: 'SMEMBER' },
    });
    const key = await topology.http.call<{ token: string }>(
      'POST',
      `/api/v1/account/${boot.account.id}/kb/${kb}/service_account/${sa.body.id}/keys`,
      {
        credential: pat,
        body: { expires: new Date(Date.now() + 86_400_000).toISOString() },
      },
    );
    reader = apiKey(key.body.token);
    const other = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: { slug: 'other-kb', title: 'other' },
    });
    otherKb = (other.body.uuid ?? other.body.id) as string;

    // The workload.
    const byKey = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: manager,
      headers: { 'x-svcdb-user': 'end-user-7', 'x-ndb-client': 'widget' },
      body: { title: 'Storms', texts: { body: { body: 'A storm brings rain, wind and thunder over the sea.' } } },
    });
    expect(byKey.status).toBe(201);
    const byUser = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: userToken,
      body: { title: 'Cats', texts: { body: { body: 'Cats sleep most of the day and hunt at night.' } } },
    });
    expect(byUser.status).toBe(201);
    const scratch = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Scratch' },
    });
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/resource/${byKey.body.uuid}`, { credential: manager })).status).toBe(200);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/resource/${byUser.body.uuid}`, { credential: userToken })).status).toBe(200);
    expect(
      (
        await topology.http.call('PATCH', `/api/v1/kb/${kb}/resource/${byUser.body.uuid}`, {
          credential: userToken,
          body: { title: 'Cats and kittens' },
        })
      ).status,
    ).toBe(200);
    expect((await topology.http.call('DELETE', `/api/v1/kb/${kb}/resource/${scratch.body.uuid}`, { credential: manager })).status).toBe(
      204,
    );
    await eventually(async () => {
      const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
      });
      return list.body.resources.length === 2 && list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
    }, 'both resources processed');
    expect(
      (
        await topology.http.call('POST', `/api/v1/kb/${kb}/find`, {
          credential: manager,
          body: { query: 'storm rain', audit_metadata: { team: 'blue' } },
        })
      ).status,
    ).toBe(200);
    expect((await topology.http.call('POST', `/api/v1/kb/${kb}/find`, { credential: userToken, body: { query: 'cats' } })).status).toBe(
      200,
    );
    const ask = await topology.http.call<{ answer: string }>('POST', `/api/v1/kb/${kb}/ask`, {
      credential: userToken,
      headers: { 'x-synchronous': 'true' },
      body: {
        query: 'What does a storm bring?',
        chat_history: [{ author: 'USER', text: 'Tell me about the weather' }],
        rag_strategies: [{ name: 'neighbouring_paragraphs', before: 1, after: 1 }],
      },
    });
    expect(ask.status).toBe(200);
    learningId = ask.headers.get('x-svc-learning-id') as string;
    expect(
      (
        await topology.http.call('POST', `/api/v1/kb/${kb}/feedback`, {
          credential: userToken,
          body: { ident: learningId, good: false, task: 'CHAT', feedback: 'too vague' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await topology.http.call('POST', `/api/v1/kb/${kb}/vectorsets/${encodeURIComponent('local:topics')}`, { credential: manager }))
        .status,
    ).toBeLessThan(300);
    // The other KB's activity.
    expect(
      (await topology.http.call('POST', `/api/v1/kb/${otherKb}/find`, { credential: pat, body: { query: 'secret other question' } }))
        .status,
    ).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await topology?.stop();
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  }, 60_000);

  it('records writes and reads with who acted, as a key (nuakey) or as a user', async () => {
    const created = await atLeast('new', 3);
    expect(created.find((r) => r['user_id'] === 'end-user-7')).toMatchObject({
      user_type: 'nuakey',
      client_type: 'widget',
      resource_id: expect.any(String),
    });
    expect(created.filter((r) => r['user_id'] === userId).map((r) => r['user_type'])).toEqual(['user', 'user']);
    const visited = await atLeast('visited', 2);
    expect(visited.map((r) => r['user_type']).sort()).toEqual(['nuakey', 'user']);
    expect((await atLeast('modified', 1))[0]).toMatchObject({ user_type: 'user', user_id: userId });
    expect((await atLeast('deleted', 1))[0]).toMatchObject({ user_type: 'nuakey' });
    const processed = await atLeast('processed', 2);
    expect(processed[0]).toMatchObject({
      user_type: 'nuakey',
      client_type: 'processing',
      audit_metadata: expect.objectContaining({ field: expect.stringContaining('body') }),
    });
    await atLeast('indexed', 2);
  });

  it('keeps the details of searches and answers, with the feedback merged into its answer', async () => {
    const searches = await atLeast('search', 2);
    expect(searches.map((r) => r['question'])).toEqual(expect.arrayContaining(['storm rain', 'cats']));
    expect(searches.find((r) => r['question'] === 'storm rain')).toMatchObject({
      user_type: 'nuakey',
      audit_metadata: { team: 'blue' },
      resources_count: expect.any(Number),
    });
    expect(JSON.stringify(searches)).not.toContain('secret other question');
    const [chat] = await eventually(async () => {
      const r = await atLeast('chat', 1);
      return r[0]?.['feedback_good'] === false ? r : undefined;
    }, 'the feedback merged');
    expect(chat).toMatchObject({
      user_type: 'user',
      user_id: userId,
      question: 'What does a storm bring?',
      answer: expect.stringMatching(/\S/),
      learning_id: learningId,
      model: 'extractive',
      chat_history: [{ author: 'USER', text: 'Tell me about the weather' }],
      rag_strategies_names: ['neighbouring_paragraphs'],
      rag_strategies: [{ name: 'neighbouring_paragraphs', before: 1, after: 1 }],
      status: 0,
      feedback_good: false,
      feedback_comment: 'too vague',
    });
    expect((chat?.['retrieved_context'] as unknown[]).length).toBeGreaterThan(0);
  });

  it('records the semantic-model task as started and stopped', async () => {
    const [started] = await atLeast('started', 1);
    expect(started).toMatchObject({ user_type: 'nuakey', audit_metadata: { task: 'semantic-model-migration', model: 'local:topics' } });
    const [stopped] = await atLeast('stopped', 1);
    expect(stopped).toMatchObject({ audit_metadata: { task: 'semantic-model-migration', model: 'local:topics', resources: 2 } });
  });

  it('streams NDJSON pages, filtered', async () => {
    await atLeast('new', 3);
    const first = await query('new', { pagination: { limit: 2 } });
    expect(first.status).toBe(200);
    expect(first.type).toContain('application/x-ndjson');
    expect(first.hasMore).toBe('true');
    expect(first.records.map((r) => Object.keys(r).sort())).toEqual([
      ['date', 'id'],
      ['date', 'id'],
    ]);
    const rest = await query('new', { pagination: { limit: 2, starting_after: first.records[1]?.['id'] } });
    expect(rest.hasMore).toBe('false');
    expect(rest.records).toHaveLength(1);
    const back = await query('new', { pagination: { limit: 5, ending_before: rest.records[0]?.['id'] } });
    expect(back.records).toEqual(first.records);
    const keyed = await query('new', {
      show: ['user_id', 'client_type'],
      filters: { user_type: { eq: 'nuakey' }, client_type: { like: 'wid%' } },
    });
    expect(keyed.records).toEqual([{ id: expect.any(Number), date: expect.any(String), user_id: 'end-user-7', client_type: 'widget' }]);
    const meta = await query('search', { show: ['question'], filters: { audit_metadata: [{ key: 'team', eq: 'blue' }] } });
    expect(meta.records.map((r) => r['question'])).toEqual(['storm rain']);
    expect((await query('search', { filters: { question: { ilike: 'STORM%' } } })).records).toHaveLength(1);
    expect((await query('new', { year_month: '2001-01' })).records).toEqual([]);
    const months = await topology.http.call<{ downloads: string[] }>('GET', `/api/v1/kb/${kb}/activity/chat/months`, {
      credential: manager,
    });
    expect(months.body).toEqual({ downloads: [month] });
  });

  it("is for the KB's managers, and only of their KB", async () => {
    expect((await query('new', {}, reader)).status).toBe(403);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/activity/new/months`, { credential: reader })).status).toBe(403);
    expect((await query('new', {}, null)).status).toBe(401);
    // The first KB's key opens nothing of another KB.
    expect((await query('search', {}, manager, otherKb)).status).toBe(403);
    // The owner sees the other KB's activity there, and only there.
    const other = await eventually(async () => {
      const r = await query('search', { show: ['question'] }, pat, otherKb);
      return r.records.length > 0 ? r.records : undefined;
    }, "the other KB's search");
    expect(other.map((r) => r['question'])).toEqual(['secret other question']);
  });

  it('refuses bad queries with 422, listing every invalid member', async () => {
    const bad = await topology.http.call<{ detail: { loc: (string | number)[]; type: string }[] }>(
      'POST',
      `/api/v1/kb/${kb}/activity/search/query`,
      {
        credential: manager,
        body: {
          year_month: '2026-1',
          filters: { date: { eq: 'x' }, question: { like: 'x'.repeat(500) }, total_duration: { gt: 'slow' }, answer: { eq: 'a' } },
          pagination: { limit: 5000 },
        },
      },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => [d.loc.join('.'), d.type])).toEqual([
      ['body.year_month', 'value_error'],
      ['body.filters.date', 'value_error'],
      ['body.filters.question.like', 'string_too_long'],
      ['body.filters.total_duration.gt', 'int_type'],
      ['body.filters.answer', 'extra_forbidden'],
      ['body.pagination.limit', 'less_than_equal'],
    ]);
    const tooMany = await topology.http.call('POST', `/api/v1/kb/${kb}/activity/search/query`, {
      credential: manager,
      body: {
        year_month: month,
        filters: { audit_metadata: Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, eq: 'a', ne: 'b', gt: 'c' })) },
      },
    });
    expect(tooMany.status).toBe(422);
    const noType = await topology.http.call<{ detail: { loc: (string | number)[]; type: string }[] }>(
      'POST',
      `/api/v1/kb/${kb}/activity/nope/query`,
      { credential: manager, body: { year_month: month, filters: { total_duration: { gt: 'slow' } } } },
    );
    expect(noType.status).toBe(422);
    expect(noType.body.detail.map((d) => [d.loc.join('.'), d.type])).toEqual([
      ['path.event_type', 'enum'],
      ['body.filters.total_duration.gt', 'int_type'],
    ]);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/activity/nope/months`, { credential: manager })).status).toBe(422);
  });
  it('seals the log into hash chains that verify online, and offline from an export', async () => {
    type Report = {
      verified: number;
      unsealed: number;
      head: { seq: number; hash: string } | null;
      broken: unknown;
      next_seq: number | null;
    };
    await atLeast('visited', 2);
    const report = await eventually(async () => {
      const r = await topology.http.call<Report>('GET', `/api/v1/kb/${kb}/activity/visited/verify`, { credential: manager });
      expect(r.status).toBe(200);
      return r.body.unsealed === 0 && r.body.verified >= 2 ? r.body : undefined;
    }, 'the visited records sealed');
    expect(report).toMatchObject({ broken: null, next_seq: null, head: { seq: report.verified } });
    // An export with the chain members verifies offline against the head.
    const show = [
      'event_id',
      'user_id',
      'user_type',
      'client_type',
      'total_duration',
      'resource_id',
      'audit_metadata',
      'details',
      'chain_seq',
      'chain_hash',
    ];
    const exported = await query('visited', { show, pagination: { limit: 1000 } });
    expect(exported.records).toHaveLength(report.verified);
    const file = join(modelDir, 'visited.ndjson');
    writeFileSync(file, exported.text);
    const verify = (head: string) =>
      spawnSync(
        process.execPath,
        [join(REPO_ROOT, 'tools', 'scripts', 'verify-activity.mjs'), '--kb', kb, '--type', 'visited', '--head', head, file],
        { encoding: 'utf8' },
      );
    const offline = verify(report.head?.hash ?? '');
    expect(offline.status).toBe(0);
    expect(JSON.parse(offline.stdout)).toMatchObject({ records: report.verified, verified: report.verified, broken: null });
    writeFileSync(file, exported.text.replace('"user_type":"', '"user_type":"x'));
    expect(verify(report.head?.hash ?? '').status).toBe(1);
    // Managers only; bad slices are 422.
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/activity/visited/verify`, { credential: reader })).status).toBe(403);
    const bad = await topology.http.call<{ detail: { loc: string[] }[] }>(
      'GET',
      `/api/v1/kb/${kb}/activity/visited/verify?from_seq=x&limit=-1`,
      { credential: manager },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => d.loc.join('.'))).toEqual(['query.from_seq', 'query.limit']);
    expect(
      (await topology.http.call('GET', `/api/v1/kb/${kb}/activity/visited/verify?limit=2000000`, { credential: manager })).status,
    ).toBe(422);
  });
  it('prepares NDJSON and CSV downloads of a query behind a signed link, and the legacy month CSV', async () => {
    type Download = {
      request_id: string;
      download_type: string;
      download_format: string;
      event_type: string;
      kb_id: string;
      download_url: string | null;
      status: string;
      records: number | null;
    };
    const request = (accept: string | undefined, body: Row, credential: NonNullable<Credential> = manager) =>
      fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/activity/search/query/download`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}), [credential.header]: credential.value },
        body: JSON.stringify(body),
      });
    const status = (id: string) =>
      topology.http.call<Download>('GET', `/api/v1/kb/${kb}/activity/download_request/${id}`, { credential: manager });
    const ready = (id: string) =>
      eventually(async () => {
        const r = await status(id);
        return r.body.status === 'done' ? r.body : undefined;
      }, 'the file');
    // The link is signed for the service's public address: fetched here through the test's own.
    const fetchLink = (url: string) => fetch(`${topology.http.baseUrl}${new URL(url).pathname}${new URL(url).search}`);
    const body = { year_month: month, show: ['question', 'resources_count'], filters: {} };
    const expected = (await query('search', { ...body, pagination: { limit: 1000 } })).records;
    expect(expected.length).toBeGreaterThan(0);

    const nd = await request('application/x-ndjson', body);
    expect(nd.status).toBe(202);
    const asked = (await nd.json()) as Download;
    expect(asked).toMatchObject({ download_type: 'query', download_format: 'ndjson', event_type: 'search', kb_id: kb, download_url: null });
    const done = await ready(asked.request_id);
    expect(done.records).toBe(expected.length);
    const file = await fetchLink(done.download_url as string);
    expect(file.status).toBe(200);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(
      (await file.text())
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row),
    ).toEqual(expected);
    // Another object, or an altered link, opens nothing.
    const forged = new URL(done.download_url as string);
    forged.searchParams.set('expires', String(Number(forged.searchParams.get('expires')) + 3600));
    expect((await fetchLink(forged.toString())).status).toBe(401);

    const csv = await request('text/csv; charset=utf-8', body);
    expect(csv.status).toBe(202);
    const csvDone = await ready(((await csv.json()) as Download).request_id);
    const bytes = Buffer.from(await (await fetchLink(csvDone.download_url as string)).arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // the UTF-8 byte order mark (Response.text() would drop it)
    const text = bytes.subarray(3).toString('utf8');
    expect(text.startsWith('id,date,question,resources_count\r\n')).toBe(true);
    expect(text.trim().split('\r\n')).toHaveLength(expected.length + 1);

    // The legacy download: one month of one type, every member, as CSV.
    const legacy = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/activity/download?type=search&month=${month}`, {
      headers: { [manager.header]: manager.value },
    });
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get('content-type')).toContain('text/csv');
    expect(legacy.headers.get('content-disposition')).toContain(`activity-search-${month}.csv`);
    const legacyRows = (await legacy.text()).trim().split('\r\n');
    expect(legacyRows).toHaveLength(expected.length + 1);
    expect(legacyRows[0]).toContain('question');

    // Bad requests.
    const noAccept = await request(undefined, body);
    expect(noAccept.status).toBe(422);
    expect(((await noAccept.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual(['header', 'accept']);
    const detail = async (r: Response) =>
      ((await r.json()) as { detail: { loc: string[]; type: string }[] }).detail.map((d) => [d.loc.join('.'), d.type]);
    // The body's contract, at the gateway: every problem at once.
    const bad = await request('text/csv', {
      year_month: '2026-1',
      filters: { answer: { eq: 'a' } },
      pagination: { limit: 5 },
      notify_via_email: true,
    });
    expect(bad.status).toBe(422);
    expect(await detail(bad)).toEqual([
      ['body.year_month', 'value_error'],
      ['body.filters.answer', 'extra_forbidden'],
      ['body.email_address', 'missing'],
      ['body.pagination', 'extra_forbidden'],
    ]);
    // What only the reporting service knows: it has no SMTP configured here.
    const noMail = await request('text/csv', { ...body, notify_via_email: true, email_address: 'me@example.com' });
    expect(noMail.status).toBe(422);
    expect(await detail(noMail)).toEqual([['body.notify_via_email', 'value_error']]);
    expect((await request('text/csv', body, reader)).status).toBe(403);
    expect((await status('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await status('nope')).status).toBe(404);
    expect((await topology.http.call('GET', `/api/v1/kb/${kb}/activity/download?type=search`, { credential: manager })).status).toBe(422);
  });
});
