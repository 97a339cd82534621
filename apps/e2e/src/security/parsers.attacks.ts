import { officeBomb, pngBomb } from '@kb/platform/testing';
import { apiKey, type HttpClient } from '../support/http-client';
import type { Topology } from '../support/topologies';

const MiB = 1024 * 1024;
const TYPES = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};
type FieldError = { body: string; code: number; code_str: string };
type ResourceBody = {
  metadata?: { status: string };
  data?: { files?: Record<string, { error?: FieldError }>; texts?: Record<string, { error?: FieldError }> };
};

/**
 * Run as `describe` bodies by parsers.e2e-spec.ts (standalone, every case) and
 * parsers.distributed.e2e-spec.ts (the understanding app on its own, `only` the DOCX bomb).
 *
 * The attack: a writer uploads files built to exhaust the parser — ZIP bombs dressed as Office
 * documents (~1 MB that inflate to 400 MB of tiny paragraphs), HTML nested 100 000 levels deep,
 * a PNG of 50 000 × 50 000 pixels. Before the sandbox, the DOCX alone was parsed on the main
 * thread until the process died (the test saw the connection reset after ~140 s); every tenant's
 * jobs and the health checks went with it. Now each fails its own field with a clear, non-retryable error; the service stays ready and the
 * next upload is processed.
 */
export function describeParserAttacks(start: (env: Record<string, string>) => Promise<Topology>, only?: 'docx'): void {
  let topology: Topology;
  let http: HttpClient;
  let kbid: string;
  let key: ReturnType<typeof apiKey>;

  beforeAll(async () => {
    // A short wall time so the deep-HTML case ends in seconds; the ZIP and pixel checks need none.
    topology = await start({ EXTRACTION_TIMEOUT_MS: '15000' });
    http = topology.http;
    const boot = topology.bootstrap();
    kbid = boot.kb.id;
    key = apiKey(boot.api_key.token);
  }, 120_000);

  afterAll(() => topology?.stop(), 60_000);

  const upload = async (bytes: Buffer, contentType: string, filename: string): Promise<{ uuid: string; field_id: string }> => {
    const res = await fetch(`${http.baseUrl}/api/v1/kb/${kbid}/upload`, {
      method: 'POST',
      headers: { [key.header]: key.value, 'content-type': contentType, 'x-filename': filename },
      body: new Uint8Array(bytes),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { uuid: string; field_id: string };
  };

  const settled = (rid: string, what: string): Promise<ResourceBody> =>
    http.eventually(
      async () => {
        const r = await http.call<ResourceBody>('GET', `/api/v1/kb/${kbid}/resource/${rid}?show=basic&show=errors`, { credential: key });
        const status = r.body.metadata?.status;
        return status === 'PROCESSED' || status === 'ERROR' ? r.body : undefined;
      },
      90_000,
      what,
    );

  /** The service answers readiness, and a plain text resource created now is processed. */
  const stillServing = async (): Promise<void> => {
    expect((await http.call('GET', '/health/ready')).status).toBe(200);
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'After the bomb', texts: { body: { body: 'Lighthouses guide ships along the rocky coast.' } } },
    });
    expect(created.status).toBe(201);
    expect((await settled(created.body.uuid, 'the text resource to be processed')).metadata?.status).toBe('PROCESSED');
  };

  const expectFieldError = async (bytes: Buffer, contentType: string, filename: string, message: RegExp): Promise<void> => {
    const { uuid, field_id } = await upload(bytes, contentType, filename);
    // Readiness while the hostile file is being parsed: the HTTP side is not blocked.
    expect((await http.call('GET', '/health/ready')).status).toBe(200);
    const done = await settled(uuid, `${filename} to be settled`);
    expect(done.metadata?.status).toBe('ERROR');
    expect(done.data?.files?.[field_id]?.error).toEqual({
      body: expect.stringMatching(message),
      code: 413,
      code_str: 'TOO_LARGE',
      created: expect.any(String),
    });
    await stillServing();
  };

  it.each(only ? [only] : (['docx', 'xlsx', 'pptx'] as const))(
    'a %s ZIP bomb (~1 MB inflating to 400 MB) fails its field TOO_LARGE',
    async (kind) => {
      const bomb = officeBomb(kind, 400 * MiB);
      expect(bomb.length).toBeLessThan(1.5 * MiB);
      await expectFieldError(bomb, TYPES[kind], `bomb.${kind}`, /decompression bomb/);
    },
    240_000,
  );

  if (only) return;

  it('a DOCX whose directory lies about its sizes is stopped while inflating', async () => {
    await expectFieldError(
      officeBomb('docx', 400 * MiB, { lie: true }),
      TYPES.docx,
      'liar.docx',
      /expands beyond the 1024 bytes it declares/,
    );
  }, 240_000);

  it('HTML nested 100 000 levels deep is cut off at the wall time', async () => {
    const html = Buffer.from(`<html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`);
    await expectFieldError(html, 'text/html', 'deep.html', /took longer than 15000 ms/);
  }, 240_000);

  it('a 2 MB HTML text field of unclosed tags (minutes for the old patterns) is converted at once', async () => {
    const body = '<script>'.repeat(125_000) + '<'.repeat(1_000_000);
    const created = await http.call<{ uuid: string }>('POST', `/api/v1/kb/${kbid}/resources`, {
      credential: key,
      body: { title: 'Unclosed', texts: { body: { body, format: 'HTML' } } },
    });
    expect(created.status).toBe(201);
    expect((await http.call('GET', '/health/ready')).status).toBe(200);
    expect((await settled(created.body.uuid, 'the HTML text field to be processed')).metadata?.status).toBe('PROCESSED');
    await stillServing();
  }, 240_000);

  it('a PNG of 50 000 × 50 000 pixels (2.4 MB) is refused before decoding', async () => {
    await expectFieldError(pngBomb(50_000, 50_000), 'image/png', 'huge.png', /more than 100000000 pixels/);
  }, 240_000);
}
