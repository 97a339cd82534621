import { OutboundHttp } from '@kb/platform/net';
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from '@kb/platform/testing';
import { ExtractionError } from './extraction.error';
import { OpenAiTranscriber } from './openai-transcriber';

/** One second of 16 kHz mono 16-bit silence, as the media extractor sends it. */
function silentWav(seconds = 1): Buffer {
  const data = Buffer.alloc(16_000 * 2 * seconds);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

const failureOf = (p: Promise<unknown>): Promise<ExtractionError> =>
  p.then(
    () => Promise.reject(new Error('the transcription succeeded')),
    (e: unknown) => (e instanceof ExtractionError ? e : Promise.reject(e)),
  );

describe('OpenAiTranscriber', () => {
  let server: FakeTranscriptionServer;
  /** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
  const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
  const strict = new OutboundHttp();
  beforeAll(async () => (server = await startFakeTranscriptionServer()));
  afterAll(async () => {
    await Promise.all([local.close(), strict.close()]);
    await server.close();
  });

  const make = (http: OutboundHttp) => new OpenAiTranscriber({ url: server.url, key: 'sk-audio', model: 'whisper-1', http });

  it('sends the audio through the guarded client and reads the segments', async () => {
    const result = await make(local).transcribe(silentWav(), { filename: 'memo', language: 'es' });
    expect(result.segments).toEqual([{ start: 0, end: 1, text: ' Part 1.1.' }]);
    expect(server.requests[0]).toMatchObject({
      model: 'whisper-1',
      language: 'es',
      authorization: 'Bearer sk-audio',
      filename: 'memo.wav',
      seconds: 1,
    });
  });

  it('names the status and not the body of a failure: an outage is retried, a refusal is final', async () => {
    server.failNext(503);
    const outage = await failureOf(make(local).transcribe(silentWav(), { filename: 'a.wav' }));
    expect([outage.code, outage.message]).toEqual([
      'TRANSCRIPTION_UNAVAILABLE',
      expect.stringContaining('answered HTTP 503 (unavailable)'),
    ]);
    server.failNext(401);
    const refused = await failureOf(make(local).transcribe(silentWav(), { filename: 'a.wav' }));
    expect([refused.code, refused.message]).toEqual([
      'TRANSCRIPTION_FAILED',
      expect.stringContaining('answered HTTP 401 (credentials refused)'),
    ]);
    for (const e of [outage, refused]) expect(e.message).not.toContain('failing on purpose');
  });

  it('refuses a service on loopback under the default policy, without sending it a byte', async () => {
    const before = server.requests.length;
    const error = await failureOf(make(strict).transcribe(silentWav(), { filename: 'a.wav' }));
    expect(error.code).toBe('FORBIDDEN_ADDRESS');
    expect(server.requests.length).toBe(before);
  });
});
