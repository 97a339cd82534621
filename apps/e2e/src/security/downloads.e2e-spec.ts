import { apiKey, bearer, type Credential, type HttpClient } from '../support/http-client';
import { startStandalone, type Topology } from '../support/topologies';

/**
 * Served files and resumable uploads (issue 16, item 7). The attacks: a file name that breaks the
 * download header (a 500, or a header of the attacker's choosing), an uploaded HTML or XML file
 * opened inline from the service's origin (stored XSS), and a deferred-length TUS upload that
 * grows past the account's upload limit until the disk is full.
 */
const MiB = 1024 ** 2;
/** The default account's limit for non-media files (libs/accounts/src/accounts/account-limits.ts). */
const NON_MEDIA_LIMIT = 500 * MiB;
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** RFC 5987 `value-chars`: what `filename*` must carry for a name. */
const rfc5987 = (s: string) => encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

describe('served files and resumable uploads (standalone)', () => {
  let topology: Topology;
  let http: HttpClient;
  let kbid: string;
  let writer: NonNullable<Credential>;

  beforeAll(async () => {
    topology = await startStandalone();
    http = topology.http;
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const account = boot.account.id;
    kbid = (
      await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, {
        credential: pat,
        body: { slug: `downloads-${Date.now()}` },
      })
    ).body.id;
    const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_accounts`, {
      credential: pat,
      body: { role: 'SCONTRIBUTOR' },
    });
    const key = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kbid}/service_account/${sa.body.id}/keys`, {
      credential: pat,
      body: { expires: new Date(Date.now() + 3600_000).toISOString() },
    });
    writer = apiKey(key.body.token);
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
  }, 60_000);

  const download = (rid: string, field: string, query = '') =>
    fetch(`${http.baseUrl}/api/v1/kb/${kbid}/resource/${rid}/file/${field}/download/field${query}`, {
      headers: { [writer.header]: writer.value },
    });

  it('downloads files whatever their names: an ASCII fallback and the UTF-8 name, never a raw byte or a line break in the header', async () => {
    const names = [
      '報告書.txt',
      '🎉 party.txt',
      'say "hi".txt',
      'back\\slash.txt',
      'crlf\r\nSet-Cookie: pwned=1.txt',
      "it's (100%) *done*.txt",
    ];
    const files = Object.fromEntries(
      names.map((filename, i) => [`f${i}`, { file: { filename, content_type: 'text/plain', payload: b64(`file ${i}`) } }]),
    );
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: writer,
      body: { title: 'Names', files },
    });
    expect(created.status).toBe(201);
    for (const [i, name] of names.entries()) {
      const res = await download(created.body.uuid, `f${i}`);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      const disposition = res.headers.get('content-disposition') ?? '';
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%!#$&+\-.^_`|~]+$/);
      expect(disposition.endsWith(`filename*=UTF-8''${rfc5987(name)}`)).toBe(true);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(await res.text()).toBe(`file ${i}`);
    }
  });

  it('serves every file with nosniff and a sandboxing CSP; HTML and XML only as attachments, even when asked inline', async () => {
    const files = {
      page: { file: { filename: 'page.html', content_type: 'text/html', payload: b64('<script>alert(document.cookie)</script>') } },
      feed: {
        file: {
          filename: 'feed.xml',
          content_type: 'application/xml',
          payload: b64('<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>'),
        },
      },
      notes: { file: { filename: 'notes.txt', content_type: 'text/plain', payload: b64('plain notes') } },
    };
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: writer,
      body: { title: 'Active', files },
    });
    expect(created.status).toBe(201);
    for (const [field, inline] of [
      ['page', 'attachment'],
      ['feed', 'attachment'],
      ['notes', 'inline'],
    ] as const) {
      const res = await download(created.body.uuid, field, '?inline=true');
      expect(res.status).toBe(200);
      expect({ field, disposition: res.headers.get('content-disposition')?.split(';')[0] }).toEqual({ field, disposition: inline });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      await res.arrayBuffer();
    }
  });

  describe('TUS uploads are bounded by the account upload limit', () => {
    const tus = (path: string, method: string, headers: Record<string, string> = {}, body?: string | ReadableStream<Uint8Array>) =>
      fetch(`${http.baseUrl}/api/v1/kb/${kbid}/tusupload${path}`, {
        method,
        headers: { [writer.header]: writer.value, 'tus-resumable': '1.0.0', ...headers },
        body,
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit);
    const meta = `filename ${b64('big.txt')}`;
    const deferred = async () => {
      const created = await tus('', 'POST', { 'upload-defer-length': '1', 'upload-metadata': meta });
      expect(created.status).toBe(201);
      return `/${(created.headers.get('location') ?? '').split('/').pop() ?? ''}`;
    };
    const chunk = { 'content-type': 'application/offset+octet-stream' };

    it('refuses an Upload-Length above the limit at creation (413)', async () => {
      const res = await tus('', 'POST', { 'upload-length': String(NON_MEDIA_LIMIT + 1), 'upload-metadata': meta });
      expect(res.status).toBe(413);
    });

    it('refuses an Upload-Length above the limit declared later (413), and the upload is gone', async () => {
      const id = await deferred();
      const res = await tus(id, 'PATCH', { ...chunk, 'upload-offset': '0', 'upload-length': String(NON_MEDIA_LIMIT + 1) }, 'x');
      expect(res.status).toBe(413);
      expect((await tus(id, 'HEAD')).status).toBe(404);
    });

    it('refuses deferred-length bytes past the limit (413), and the partial upload is deleted', async () => {
      const id = await deferred();
      // Exactly the limit is accepted, streamed in 1 MiB chunks…
      const block = new Uint8Array(MiB);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= NON_MEDIA_LIMIT) return controller.close();
          sent += block.length;
          controller.enqueue(block);
        },
      });
      const full = await tus(id, 'PATCH', { ...chunk, 'upload-offset': '0' }, stream);
      expect(full.status).toBe(200);
      expect(full.headers.get('upload-offset')).toBe(String(NON_MEDIA_LIMIT));
      // …one byte more is not.
      const over = await tus(id, 'PATCH', { ...chunk, 'upload-offset': String(NON_MEDIA_LIMIT) }, 'x');
      expect(over.status).toBe(413);
      expect((await tus(id, 'HEAD')).status).toBe(404);
    }, 120_000);
  });
});
