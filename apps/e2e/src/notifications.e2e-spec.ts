import sharp from 'sharp';
import { apiKey, bearer, type Credential, type HttpClient } from './support/http-client';
import { NotificationStream, of } from './support/notification-stream';
import { startStandalone, type Topology } from './support/topologies';

/**
 * Live notifications (`GET /kb/{kbid}/notifications`) and browser tokens (`eph-token`) in the
 * standalone topology: a reader sees its KB's resource written → processed → indexed and nothing
 * of another KB; streams are bounded per caller; an ephemeral token downloads a file and a
 * thumbnail of its KB and nothing else.
 */
describe('KB notifications and ephemeral tokens (standalone)', () => {
  let topology: Topology;
  let http: HttpClient;
  let admin: NonNullable<Credential>;
  let account: string;
  let kbA: string;
  let kbB: string;
  let readerKey: NonNullable<Credential>;
  let stranger: NonNullable<Credential>;
  const streams: NotificationStream[] = [];
  const run = Date.now().toString(36);

  const open = async (kbid: string, credential: Credential) => {
    const s = await NotificationStream.open(http, kbid, credential);
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    admin = bearer(boot.personal_access_token.token);
    account = boot.account.id;
    kbA = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, {
        credential: admin,
        body: { slug: `notif-a-${run}`, title: 'A' },
      })
    ).body.id;
    kbB = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, {
        credential: admin,
        body: { slug: `notif-b-${run}`, title: 'B' },
      })
    ).body.id;
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kbA}/service_accounts`, {
      credential: admin,
      body: { role: 'SMEMBER' },
    });
    const key = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kbA}/service_account/${sa.body.id}/keys`, {
      credential: admin,
      body: { expires: new Date(Date.now() + 3600_000).toISOString() },
    });
    readerKey = apiKey(key.body.token);
    const signUp = await http.call<{ token: string }>('POST', '/api/v1/auth/signup', {
      body: { email: `stranger-${run}@example.com`, password: 'a long enough password' },
    });
    stranger = bearer(signUp.body.token);
  }, 120_000);

  afterAll(async () => {
    for (const s of streams) s.close();
    await topology?.stop();
  }, 60_000);

  describe('GET /api/v1/kb/{kbid}/notifications', () => {
    it("streams the KB's resource written → processed → indexed, with the reference's members, and nothing of another KB", async () => {
      const a = await open(kbA, admin);
      const b = await open(kbB, admin);
      const resA = await http.call<{ uuid: string; seqid: number }>('POST', `/api/v1/kb/${kbA}/resources`, {
        credential: admin,
        body: { title: 'Tides', texts: { body: { body: 'Tides follow the moon.' } } },
      });
      const resB = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbB}/resources`, {
        credential: admin,
        body: { title: 'Other', texts: { body: { body: 'Another KB entirely.' } } },
      });
      expect([resA.status, resB.status]).toEqual([201, 201]);
      await a.until((seen) => of(resA.body.uuid)(seen).includes('resource_indexed'), 'A indexed');
      await b.until((seen) => of(resB.body.uuid)(seen).includes('resource_indexed'), 'B indexed');
      expect(of(resA.body.uuid)(a.seen)).toEqual(['resource_written', 'resource_processed', 'resource_indexed']);
      const [written, processed, indexed] = a.seen.filter((n) => n.data['resource_uuid'] === resA.body.uuid);
      expect(written).toEqual({
        type: 'resource_written',
        data: { resource_uuid: resA.body.uuid, resource_title: 'Tides', seqid: resA.body.seqid, operation: 'created', error: false },
      });
      expect(processed).toEqual({
        type: 'resource_processed',
        data: {
          resource_uuid: resA.body.uuid,
          resource_title: 'Tides',
          seqid: resA.body.seqid,
          ingestion_succeeded: true,
          processing_errors: false,
        },
      });
      expect(indexed).toEqual({
        type: 'resource_indexed',
        data: { resource_uuid: resA.body.uuid, resource_title: 'Tides', seqid: resA.body.seqid },
      });
      // Nothing of B reached A's reader, nor of A B's.
      expect(of(resB.body.uuid)(a.seen)).toEqual([]);
      expect(of(resA.body.uuid)(b.seen)).toEqual([]);

      const modified = await http.call<{ seqid: number }>('PATCH', `/api/v1/kb/${kbA}/resource/${resA.body.uuid}`, {
        credential: admin,
        body: { title: 'Tides (2)' },
      });
      expect(modified.status).toBe(200);
      await a.until((seen) => seen.some((n) => n.type === 'resource_written' && n.data['operation'] === 'modified'), 'modified');
      expect((await http.call('DELETE', `/api/v1/kb/${kbA}/resource/${resA.body.uuid}`, { credential: admin })).status).toBe(204);
      await a.until((seen) => seen.some((n) => n.type === 'resource_written' && n.data['operation'] === 'deleted'), 'deleted');
      expect(a.seen.find((n) => n.data['operation'] === 'modified')?.data).toMatchObject({
        resource_title: 'Tides (2)',
        seqid: modified.body.seqid,
      });
      a.close();
      b.close();
    }, 120_000);

    it('is open to a Reader of the KB; no credential is 401, a KB of another tenant 404, a bad id 422', async () => {
      const reader = await open(kbA, readerKey);
      expect(reader.status).toBe(200);
      reader.close();
      expect((await open(kbB, readerKey)).status).toBe(403);
      expect((await open(kbA, null)).status).toBe(401);
      expect((await open(kbA, stranger)).status).toBe(404);
      expect((await open('not-a-uuid', admin)).status).toBe(422);
    }, 60_000);

    it('allows 5 open streams per caller: the 6th is 429 until one closes', async () => {
      const mine: NotificationStream[] = [];
      for (let i = 0; i < 5; i++) mine.push(await open(i % 2 === 0 ? kbA : kbB, admin));
      expect(mine.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
      const refused = await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/notifications`, { headers: { [admin.header]: admin.value } });
      expect(refused.status).toBe(429);
      // Another caller is not affected.
      const other = await open(kbA, readerKey);
      expect(other.status).toBe(200);
      other.close();
      (mine[0] as NotificationStream).close();
      const again = await http.eventually(
        async () => {
          const s = await open(kbA, admin);
          if (s.status === 200) return s;
          return undefined;
        },
        10_000,
        'a stream slot after closing one',
      );
      again.close();
      for (const s of mine) s.close();
    }, 60_000);
  });

  describe('ephemeral tokens (eph-token)', () => {
    let rid: string;
    let fieldId: string;
    let pngBytes: Buffer;

    beforeAll(async () => {
      pngBytes = await sharp({ create: { width: 160, height: 100, channels: 3, background: { r: 20, g: 120, b: 200 } } })
        .png()
        .toBuffer();
      const watch = await open(kbA, admin);
      const res = await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/upload`, {
        method: 'POST',
        headers: { [admin.header]: admin.value, 'content-type': 'image/png', 'x-filename': 'blue.png' },
        body: new Uint8Array(pngBytes),
      });
      expect(res.status).toBe(201);
      ({ uuid: rid, field_id: fieldId } = (await res.json()) as { uuid: string; field_id: string });
      await watch.until((seen) => of(rid)(seen).includes('resource_processed'), 'the image processed');
      watch.close();
    }, 120_000);

    const token = async (credential: Credential, kbid = kbA, body: Record<string, unknown> = {}) =>
      http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/ephemeral_tokens`, { credential, body });
    const fileUrl = (kbid: string, eph: string) =>
      `${http.baseUrl}/api/v1/kb/${kbid}/resource/${rid}/file/${fieldId}/download/field?eph-token=${encodeURIComponent(eph)}`;
    const thumbUrl = (eph: string) =>
      `${http.baseUrl}/api/v1/kb/${kbA}/resource/${rid}/file/${fieldId}/download/extracted/thumbnail?eph-token=${encodeURIComponent(eph)}`;

    it("a user's token downloads the file and its thumbnail without a credential header", async () => {
      const res = await token(admin, kbA, { ttl: 120, agent_session: 'tab-1' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ token: expect.any(String) });
      const file = await fetch(fileUrl(kbA, res.body.token));
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(pngBytes);
      const thumb = await fetch(thumbUrl(res.body.token));
      expect(thumb.status).toBe(200);
      expect(thumb.headers.get('content-type')).toBe('image/jpeg');
      expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).format).toBe('jpeg');
    }, 60_000);

    it('an API key makes one for its KB (both routes); the key-only route refuses users', async () => {
      const fromKey = await http.call<{ token: string }>('POST', '/api/v1/ephemeral_token', { credential: readerKey, body: {} });
      expect(fromKey.status).toBe(201);
      expect((await fetch(fileUrl(kbA, fromKey.body.token))).status).toBe(200);
      const viaAccount = await token(readerKey);
      expect(viaAccount.status).toBe(201);
      expect((await fetch(thumbUrl(viaAccount.body.token))).status).toBe(200);
      expect((await http.call('POST', '/api/v1/ephemeral_token', { credential: admin, body: {} })).status).toBe(403);
      expect((await token(readerKey, kbB)).status).toBe(403);
    }, 60_000);

    it('is refused on writes, on routes that are not downloads, on another KB, as a header, and with a header besides', async () => {
      const eph = (await token(admin)).body.token;
      const q = `eph-token=${encodeURIComponent(eph)}`;
      // A write with the token only: refused before anything is done.
      const write = await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/resources?${q}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'nope' }),
      });
      expect(write.status).toBe(401);
      expect((await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/resource/${rid}?${q}`, { method: 'DELETE' })).status).toBe(401);
      // Reading routes that are not downloads.
      expect((await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/resource/${rid}?${q}`)).status).toBe(401);
      expect((await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/find?query=tides&${q}`)).status).toBe(401);
      expect((await fetch(`${http.baseUrl}/api/v1/kb/${kbA}/notifications?${q}`)).status).toBe(401);
      expect(
        (
          await fetch(`${http.baseUrl}/api/v1/account/${account}/kb/${kbA}/ephemeral_tokens?${q}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(401);
      // Another KB: same route shape, no access.
      expect((await fetch(fileUrl(kbB, eph))).status).toBe(403);
      // Not a header credential, under any header.
      expect((await fetch(fileUrl(kbA, '').replace(/\?eph-token=$/, ''), { headers: { Authorization: `Bearer ${eph}` } })).status).toBe(
        401,
      );
      expect(
        (await fetch(fileUrl(kbA, '').replace(/\?eph-token=$/, ''), { headers: { 'X-SVC-SERVICEACCOUNT': `Bearer ${eph}` } })).status,
      ).toBe(401);
      // With a credential header besides: two credentials, 400 like two headers.
      const both = await fetch(fileUrl(kbA, eph), { headers: { [admin.header]: admin.value } });
      expect(both.status).toBe(400);
      expect(((await both.json()) as { detail: string }).detail).toContain('Exactly one credential');
      // A forged or tampered token.
      expect((await fetch(fileUrl(kbA, `${eph.slice(0, -4)}AAAA`))).status).toBe(401);
      expect((await fetch(fileUrl(kbA, 'kbk_not_a_token'))).status).toBe(401);
    }, 60_000);

    it('bad bodies are 422; a stranger cannot make one (404); expired tokens are refused', async () => {
      for (const body of [{ ttl: 0 }, { ttl: 901 }, { ttl: 'ten' }, { agent_session: 'x'.repeat(300) }])
        expect([body, (await token(admin, kbA, body)).status]).toEqual([body, 422]);
      expect((await token(stranger)).status).toBe(404);
      expect((await token(null)).status).toBe(401);
      const short = await token(admin, kbA, { ttl: 3 });
      const first = await fetch(fileUrl(kbA, short.body.token));
      expect(first.status).toBe(200);
      await first.arrayBuffer();
      const refused = await http.eventually(
        async () => {
          const res = await fetch(fileUrl(kbA, short.body.token));
          await res.arrayBuffer();
          return res.status === 401 ? res.status : undefined;
        },
        10_000,
        'the token to expire',
      );
      expect(refused).toBe(401);
    }, 60_000);
  });
});
