import { OutboundHttp } from '@kb/platform/net';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExtractedFieldData, ProcessFieldJob } from '@kb/contracts';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from '@kb/platform/testing';
import type { UnderstandingOptions } from '../understanding.tokens';
import type { Embedder } from './analysis';
import { OpenAiTranscriber } from './extractors';
import { buildPdf } from './extractors/fixtures.testing';
import { FieldProcessorService, type FieldOutcome } from './field-processor.service';

/** The tests' servers are on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
/** The default policy: public addresses only. */
const strict = new OutboundHttp();
afterAll(() => Promise.all([local.close(), strict.close()]));

/** Deterministic 4-d vectors: tests check where vectors go, not what the model thinks. */
class FakeEmbedder implements Embedder {
  readonly model = 'fake';
  readonly dimensions = 4;
  readonly similarity = 'DOT' as const;
  readonly threshold = 0.5;
  calls: string[][] = [];
  async embedPassages(texts: string[]): Promise<number[][]> {
    this.calls.push(texts);
    return texts.map((t) => [t.length, 1, 0, 0]);
  }
  async embedQuery(text: string): Promise<number[]> {
    return [text.length, 1, 0, 0];
  }
  async close(): Promise<void> {}
}

const EML = [
  'From: Ann Example <ann@example.com>',
  'To: bob@example.org',
  'Subject: Quarterly numbers',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="XX"',
  '',
  '--XX',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hi Bob, the numbers are attached.',
  '--XX',
  'Content-Type: text/csv; name="numbers.csv"',
  'Content-Disposition: attachment; filename="numbers.csv"',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('region,total\nnorth,12\n').toString('base64'),
  '--XX--',
  '',
].join('\r\n');

const HTML = `<!doctype html><html lang="en-GB"><head><title>Tide tables</title><meta name="description" content="When the sea comes in.">
<meta property="og:image" content="https://img.example.com/tide.png"></head><body><nav>Menu</nav>
<article id="main"><h1>Tide tables</h1><p>The tide rises twice a day along the coast of Brittany. Fishermen plan their trips around it.</p>
<p>Read more at <a href="https://tides.example.com/brittany">the tide office</a>.</p></article><footer>Footer text</footer></body></html>`;

describe('FieldProcessorService', () => {
  let blobRoot: string;
  let blobs: BlobStore;
  let server: Server;
  let base: string;
  let embedder: FakeEmbedder;
  const seen: { auth?: string; cookie?: string } = {};
  const pdf = buildPdf(
    [{ lines: ['Annual report of the harbour.', 'Ships arrived every week.'] }, { lines: ['Second page about the lighthouse.'] }],
    { title: 'Harbour' },
  );

  beforeAll(async () => {
    blobRoot = mkdtempSync(join(tmpdir(), 'kb-processor-'));
    blobs = await createBlobStore({ driver: 'fs', root: blobRoot, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
    server = createServer((req, res) => {
      seen.auth = req.headers['authorization'];
      seen.cookie = req.headers['cookie'];
      if (req.url === '/page') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(HTML);
      if (req.url === '/report.pdf') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
      if (req.url === '/private.txt' && req.headers['authorization'] === 'Bearer s3cret')
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('Members only.\n\nSecond part.');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await blobs.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });

  const processor = (options: Partial<UnderstandingOptions> = {}): FieldProcessorService => {
    embedder = new FakeEmbedder();
    return new FieldProcessorService(
      {
        consumeJobs: false,
        concurrency: 1,
        maxAttempts: 3,
        outbound: local,
        ocrFactory: null,
        embedderFactory: () => embedder,
        ...options,
      },
      blobs,
    );
  };
  const job = (
    field_type: ProcessFieldJob['field_type'],
    value: Record<string, unknown>,
    extra: Partial<ProcessFieldJob> = {},
  ): ProcessFieldJob => ({
    processing_id: 'p-1',
    kbid: 'kb-1',
    rid: 'r-1',
    field_type,
    field_id: 'f1',
    seqid: 7,
    value,
    ...extra,
  });
  const extracted = (outcome: FieldOutcome): ExtractedFieldData => {
    if (!('extracted' in outcome)) throw new Error(`expected a result, got ${JSON.stringify(outcome.error)}`);
    return outcome.extracted;
  };
  const meta = (e: ExtractedFieldData) =>
    e.metadata.metadata as Record<string, unknown> & {
      paragraphs: { start: number; end: number; kind: string; key: string; sentences: unknown[]; page: { page: number } }[];
    };
  const texts = (e: ExtractedFieldData): string[] => meta(e).paragraphs.map((p) => e.text.text.slice(p.start, p.end));

  it('text: paragraphs with sentences, language, entities, relations, summary and one vector per paragraph', async () => {
    const body =
      'Marie Curie moved to Paris in 1891. She wrote to pierre@example.com about radium.\n\nShe won the Nobel Prize twice. Her work changed physics.';
    const e = extracted(await processor().process(job('text', { body, format: 'PLAIN' })));
    const m = meta(e);
    expect(e.text.text).toBe(body);
    expect(texts(e)).toEqual([
      'Marie Curie moved to Paris in 1891. She wrote to pierre@example.com about radium.',
      'She won the Nobel Prize twice. Her work changed physics.',
    ]);
    expect(m.paragraphs[0]?.sentences).toHaveLength(2);
    expect(m.paragraphs[0]?.key).toBe('r-1/t/f1/0-81');
    expect(m['language']).toBe('en');
    expect(m['mime_type']).toBe('text/plain');
    expect(m['ner']).toMatchObject({ 'pierre@example.com': 'EMAIL', 'Marie Curie': 'PERSON' });
    expect(m['relations']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ relation: 'ENTITY', to: { value: 'pierre@example.com', type: 'entity', group: 'EMAIL' } }),
      ]),
    );
    expect(typeof m['summary']).toBe('string');
    expect((m['summary'] as string).length).toBeGreaterThan(0);
    expect(e.vectors.vectors.vectors).toEqual(
      m.paragraphs.map((p) => ({
        start: p.start,
        end: p.end,
        start_paragraph: p.start,
        end_paragraph: p.end,
        vector: [p.end - p.start, 1, 0, 0],
      })),
    );
    expect(embedder.calls).toHaveLength(1);
  });

  it('text: the format decides the extraction and the given language wins over detection', async () => {
    const e = extracted(
      await processor().process(
        job('text', { body: '<p>Bonjour <b>tout</b> le monde.</p><p>Deux</p>', format: 'HTML' }, { language: 'fr-FR' }),
      ),
    );
    expect(texts(e)).toEqual(['Bonjour tout le monde.', 'Deux']);
    expect(meta(e)['language']).toBe('fr');
    expect(meta(e)['mime_type']).toBe('text/html');
  });

  it('keywordset: one paragraph per keyword under w/; datetime: its UTC date and time under d/', async () => {
    const kw = extracted(
      await processor().process(job('keywordset', { keywords: [{ value: 'zirconium' }, { value: ' helical teeth ' }, { value: '' }] })),
    );
    expect(texts(kw)).toEqual(['zirconium', 'helical teeth']);
    expect(meta(kw).paragraphs.map((p) => p.key)).toEqual(['r-1/w/f1/0-9', 'r-1/w/f1/11-24']);
    expect(kw.vectors.vectors.vectors).toHaveLength(2);
    const when = extracted(await processor().process(job('datetime', { value: '2024-05-01T10:00:00.000Z' })));
    expect(texts(when)).toEqual(['2024-05-01 10:00:00 UTC']);
    expect(meta(when).paragraphs[0]?.key).toBe('r-1/d/f1/0-23');
    const none = extracted(await processor().process(job('keywordset', { keywords: [] })));
    expect(none.text.text).toBe('');
  });

  it('file in the blob store: PDF pages, a thumbnail blob and the file member', async () => {
    await blobs.put('content/kbs/kb-1/r/r-1/f/file/f1/original', pdf, { contentType: 'application/pdf' });
    const e = extracted(
      await processor().process(job('file', { file: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/f1/original', filename: 'report.pdf' } })),
    );
    expect(e.text.text).toContain('Annual report of the harbour.');
    expect(meta(e).paragraphs.map((p) => p.page.page)).toContain(2);
    expect(meta(e)['mime_type']).toBe('application/pdf');
    const thumbnail = meta(e)['thumbnail'] as { uri: string; size: number; content_type: string };
    // One key per write: a job of an older write never overwrites a newer result's thumbnail.
    expect(thumbnail.uri).toBe('blob:content/kbs/kb-1/r/r-1/f/file/f1/thumbnails/7');
    expect((await blobs.stat(thumbnail.uri.slice('blob:'.length)))?.size).toBe(thumbnail.size);
    expect(e.file).toMatchObject({ file_thumbnail: thumbnail, icon: 'application/pdf', md5: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(e.vectors.vectors.vectors).toHaveLength(meta(e).paragraphs.length);
  });

  it('file by address: fetched with its extra_headers', async () => {
    const e = extracted(
      await processor().process(job('file', { file: { uri: `${base}/private.txt`, extra_headers: { authorization: 'Bearer s3cret' } } })),
    );
    expect(texts(e)).toEqual(['Members only.', 'Second part.']);
  });

  it('file: an e-mail gets its attachments extracted and appended', async () => {
    await blobs.put('content/kbs/kb-1/r/r-1/f/file/mail/original', EML);
    const e = extracted(
      await processor().process(
        job('file', { file: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/mail/original', filename: 'mail.eml' } }, { field_id: 'mail' }),
      ),
    );
    expect(texts(e)).toEqual(
      expect.arrayContaining(['Quarterly numbers', 'Hi Bob, the numbers are attached.', 'region | total', 'north | 12']),
    );
    const position = (e.file?.['nested_position'] as Record<string, { start: number; end: number }>)['numbers.csv'];
    expect(e.text.text.slice(position?.start, position?.end)).toBe('region | total\n\nnorth | 12');
  });

  it.each([
    ['an unsupported type', { file: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/bin/original', filename: 'tool.exe' } }, 'UNSUPPORTED_TYPE'],
    [
      'a wrong password',
      { file: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/locked/original', filename: 'l.pdf' }, password: 'nope' },
      'WRONG_PASSWORD',
    ],
    ['a missing blob', { file: { uri: 'blob:content/kbs/kb-1/r/r-1/f/file/gone/original' } }, 'FILE_NOT_FOUND'],
  ])('file: %s is a field error, not a crash', async (_what, value, code) => {
    await blobs.put(
      'content/kbs/kb-1/r/r-1/f/file/bin/original',
      Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0xb8, 0x00, 0x00, 0x01, 0x02, 0x80]),
    );
    await blobs.put('content/kbs/kb-1/r/r-1/f/file/locked/original', buildPdf([{ lines: ['Secret'] }], { userPassword: 'right' }));
    const outcome = await processor().process(job('file', value));
    expect(outcome).toEqual({ error: { body: expect.any(String), code: expect.any(Number), code_str: code } });
  });

  it('link: fetched with headers and cookies; title, description, image, links and the selected content', async () => {
    const e = extracted(
      await processor().process(
        job('link', { uri: `${base}/page`, headers: { authorization: 'Bearer t' }, cookies: { session: 'abc' }, css_selector: '#main' }),
      ),
    );
    expect(seen).toMatchObject({ auth: 'Bearer t', cookie: 'session=abc' });
    expect(e.text.text).toContain('The tide rises twice a day');
    expect(e.text.text).not.toContain('Footer text');
    expect(meta(e)['links']).toEqual(['https://tides.example.com/brittany']);
    expect(meta(e)['language']).toBe('en');
    expect(e.link).toMatchObject({
      title: 'Tide tables',
      description: 'When the sea comes in.',
      type: 'text/html',
      link_image: { uri: 'https://img.example.com/tide.png' },
    });
  });

  it('link: a non-HTML answer is extracted as a file', async () => {
    const e = extracted(await processor().process(job('link', { uri: `${base}/report.pdf` })));
    expect(e.text.text).toContain('Second page about the lighthouse.');
    expect(e.link).toMatchObject({ type: 'application/pdf' });
  });

  it('link: a private address is refused unless private networks are allowed', async () => {
    const outcome = await processor({ outbound: strict }).process(job('link', { uri: `${base}/page` }));
    expect(outcome).toEqual({ error: { body: expect.any(String), code: 403, code_str: 'FORBIDDEN_ADDRESS' } });
  });

  it('link: a failed fetch is thrown, so the worker retries it', async () => {
    await expect(processor().process(job('link', { uri: `${base}/missing` }))).rejects.toMatchObject({ code: 'FETCH_FAILED' });
  });

  it('conversation: one split per message, attachments inline appended, vectors batched', async () => {
    const messages = [
      { ident: 'm1', who: 'ann', content: { text: 'The ferry leaves at noon.\n\nBring your tickets.', format: 'PLAIN' } },
      {
        ident: 'm2',
        who: 'bob',
        content: {
          text: '**Thanks**, see the list.',
          format: 'MARKDOWN',
          attachments: [
            { filename: 'list.txt', content_type: 'text/plain', payload: Buffer.from('Passports\n\nSnacks').toString('base64') },
          ],
        },
      },
    ];
    const e = extracted(await processor().process(job('conversation', { messages })));
    expect(e.text.text).toBe('');
    expect(e.text.split_text).toEqual({
      m1: 'The ferry leaves at noon.\n\nBring your tickets.',
      m2: 'Thanks, see the list.\n\nPassports\n\nSnacks',
    });
    const m2 = e.metadata.split_metadata['m2'] as { paragraphs: { start: number; end: number; key: string }[] };
    expect(m2.paragraphs.map((p) => p.key)).toEqual(['r-1/c/f1/m2/0-21', 'r-1/c/f1/m2/23-32', 'r-1/c/f1/m2/34-40']);
    expect(Object.keys(e.vectors.split_vectors)).toEqual(['m1', 'm2']);
    expect(e.vectors.split_vectors['m2']?.vectors).toHaveLength(3);
    expect(embedder.calls).toHaveLength(1);
  });

  it('the built-in embedder gives unit-length 512-d vectors', async () => {
    const service = new FieldProcessorService({ consumeJobs: false, concurrency: 1, maxAttempts: 3, ocrFactory: null }, blobs);
    const e = extracted(await service.process(job('text', { body: 'Ships sail at dawn.\n\nThe harbour closes at night.' })));
    const vectors = e.vectors.vectors.vectors;
    expect(vectors).toHaveLength(2);
    expect(vectors[0]?.vector).toHaveLength(512);
    expect(Math.hypot(...(vectors[0]?.vector ?? []))).toBeCloseTo(1, 3);
  });
});

describe('FieldProcessorService with audio and video', () => {
  let blobRoot: string;
  let blobs: BlobStore;
  let transcription: FakeTranscriptionServer;
  let mp3: Buffer;
  const key = 'content/kbs/kb-1/r/r-1/f/file/memo/original';

  beforeAll(async () => {
    blobRoot = mkdtempSync(join(tmpdir(), 'kb-processor-media-'));
    blobs = await createBlobStore({ driver: 'fs', root: blobRoot, signingSecret: 'x'.repeat(32), publicBaseUrl: 'http://localhost' });
    transcription = await startFakeTranscriptionServer();
    execFileSync('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=5',
      join(blobRoot, 'memo.mp3'),
    ]);
    mp3 = readFileSync(join(blobRoot, 'memo.mp3'));
    await blobs.put(key, mp3, { contentType: 'audio/mpeg' });
  }, 30_000);

  afterAll(async () => {
    await transcription.close();
    await blobs.close();
    rmSync(blobRoot, { recursive: true, force: true });
  });
  beforeEach(() => (transcription.requests.length = 0));

  const embedder: Embedder = {
    model: 'fake',
    dimensions: 2,
    similarity: 'DOT',
    threshold: 0.5,
    embedPassages: async (texts) => texts.map(() => [1, 0]),
    embedQuery: async () => [1, 0],
    close: async () => undefined,
  };
  const processor = (transcriber: OpenAiTranscriber | undefined): FieldProcessorService =>
    new FieldProcessorService(
      {
        consumeJobs: false,
        concurrency: 1,
        maxAttempts: 3,
        ocrFactory: null,
        embedderFactory: () => embedder,
        transcriberFactory: async () => transcriber,
      },
      blobs,
    );
  const openAi = (key = 'sk-kb') => new OpenAiTranscriber({ url: transcription.url, key, model: 'whisper-1', http: local });
  const job = (value: Record<string, unknown>, field_type: ProcessFieldJob['field_type'] = 'file'): ProcessFieldJob => ({
    processing_id: 'p-1',
    kbid: 'kb-1',
    rid: 'r-1',
    field_type,
    field_id: 'memo',
    seqid: 1,
    value,
  });

  it('a stored recording: TRANSCRIPT paragraphs with start/end seconds, its length for usage, the language given to the transcriber', async () => {
    const outcome = await processor(openAi()).process(
      job({ file: { uri: `blob:${key}`, filename: 'memo.mp3', content_type: 'audio/mpeg' }, language: 'es' }),
    );
    if (!('extracted' in outcome)) throw new Error(JSON.stringify(outcome.error));
    const e = outcome.extracted;
    const paragraphs = e.metadata.metadata['paragraphs'] as {
      kind: string;
      start: number;
      end: number;
      start_seconds: number[];
      end_seconds: number[];
    }[];
    expect(paragraphs).toEqual([
      expect.objectContaining({
        kind: 'TRANSCRIPT',
        start: 0,
        end: e.text.text.length,
        start_seconds: [0],
        end_seconds: [expect.closeTo(5, 0)],
      }),
    ]);
    expect(e.text.text).toBe('Part 1.1. Part 1.2. Part 1.3.');
    expect(transcription.requests).toEqual([
      expect.objectContaining({
        model: 'whisper-1',
        authorization: 'Bearer sk-kb',
        language: 'es',
        sampleRate: 16000,
        channels: 1,
        bitsPerSample: 16,
      }),
    ]);
    expect(e.media_seconds).toBeCloseTo(5, 0);
    expect(e.file).toMatchObject({
      md5: createHash('md5').update(mp3).digest('hex'),
      icon: 'audio/mpeg',
      metadata: { mime_type: 'audio/mpeg', duration_seconds: String(e.media_seconds), transcription_model: 'whisper-1' },
    });
    expect(e.metadata.metadata['language']).toBe('es');
  });

  it('a recording above the 100 MiB of documents is streamed from the blob store to disk, not read into memory', async () => {
    // 560 s of 48 kHz stereo PCM: 107 MB, above the 100 MiB a document may have.
    const big = join(blobRoot, 'long.wav');
    execFileSync('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'anullsrc=r=48000:cl=stereo',
      '-t',
      '560',
      '-c:a',
      'pcm_s16le',
      big,
    ]);
    const bigKey = 'content/kbs/kb-1/r/r-1/f/file/long/original';
    await blobs.put(bigKey, createReadStream(big), { contentType: 'application/octet-stream' });
    rmSync(big);
    const outcome = await processor(openAi()).process(
      job({ file: { uri: `blob:${bigKey}`, filename: 'long.wav', md5: 'given-by-content' } }),
    );
    if (!('extracted' in outcome)) throw new Error(JSON.stringify(outcome.error));
    expect(outcome.extracted.media_seconds).toBeCloseTo(560, 0);
    expect(outcome.extracted.file).toMatchObject({ md5: 'given-by-content', icon: 'audio/wav' });
    expect(transcription.requests.map((r) => Math.round(r.seconds))).toEqual([560]);
    await blobs.delete(bigKey);
  }, 60_000);

  it('a link or a file address to a recording is streamed to disk and transcribed', async () => {
    const server = createServer((req, res) => {
      // A podcast host: the recording behind a redirect, served as generic bytes.
      if (req.url === '/episode') return void res.writeHead(302, { location: '/files/episode-1' }).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(mp3);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const processorOnLoopback = new FieldProcessorService(
        {
          consumeJobs: false,
          concurrency: 1,
          maxAttempts: 3,
          ocrFactory: null,
          outbound: local,
          embedderFactory: () => embedder,
          transcriberFactory: async () => openAi(),
        },
        blobs,
      );
      const link = await processorOnLoopback.process(job({ uri: `${base}/episode` }, 'link'));
      if (!('extracted' in link)) throw new Error(JSON.stringify(link.error));
      expect(link.extracted.text.text).toBe('Part 1.1. Part 1.2. Part 1.3.');
      expect(link.extracted.media_seconds).toBeCloseTo(5, 0);
      expect(link.extracted.link).toMatchObject({ url: `${base}/files/episode-1`, type: 'audio/mpeg' });
      const file = await processorOnLoopback.process(job({ file: { uri: `${base}/files/memo`, filename: 'memo' } }));
      if (!('extracted' in file)) throw new Error(JSON.stringify(file.error));
      expect(file.extracted.file).toMatchObject({ md5: createHash('md5').update(mp3).digest('hex'), icon: 'audio/mpeg' });
      expect(transcription.requests).toHaveLength(2);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('without a transcriber the field gets an error saying what to configure', async () => {
    const outcome = await processor(undefined).process(job({ file: { uri: `blob:${key}`, filename: 'memo.mp3' } }));
    expect(outcome).toEqual({ error: { code: 501, code_str: 'NO_TRANSCRIBER', body: expect.stringContaining('transcription_model') } });
    expect(transcription.requests).toHaveLength(0);
  });

  it("a provider outage is thrown (the worker retries the job); a refused key is the field's error", async () => {
    transcription.failNext(503);
    await expect(processor(openAi()).process(job({ file: { uri: `blob:${key}`, filename: 'memo.mp3' } }))).rejects.toMatchObject({
      code: 'TRANSCRIPTION_UNAVAILABLE',
    });
    transcription.failNext(401);
    const outcome = await processor(openAi('sk-wrong')).process(job({ file: { uri: `blob:${key}`, filename: 'memo.mp3' } }));
    expect(outcome).toEqual({ error: { code: 502, code_str: 'TRANSCRIPTION_FAILED', body: expect.stringContaining('HTTP 401') } });
  });

  it('a voice message of a conversation is transcribed into its message, and its seconds counted', async () => {
    const messages = [
      {
        ident: 'm1',
        content: {
          text: 'Listen to this.',
          format: 'PLAIN',
          attachments: [{ filename: 'voice.mp3', content_type: 'audio/mpeg', payload: mp3.toString('base64') }],
        },
      },
    ];
    const outcome = await processor(openAi()).process(job({ messages }, 'conversation'));
    if (!('extracted' in outcome)) throw new Error(JSON.stringify(outcome.error));
    expect(outcome.extracted.text.split_text['m1']).toBe('Listen to this.\n\nPart 1.1. Part 1.2. Part 1.3.');
    expect(outcome.extracted.media_seconds).toBeCloseTo(5, 0);
  });
});
