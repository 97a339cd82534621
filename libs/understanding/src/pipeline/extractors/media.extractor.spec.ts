import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from '@kb/platform/testing';
import { ExtractionError } from './extraction.error';
import { extractFile } from './extract-file';
import { OpenAiTranscriber } from './openai-transcriber';
import { detectFileType } from './detect-file-type';

/** Media built with ffmpeg itself: a tone, a video with a tone, a video without sound. */
function ffmpeg(dir: string, name: string, args: string[]): Buffer {
  const out = join(dir, name);
  execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args, out]);
  return readFileSync(out);
}

const mediaTempDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith('kb-media-')).length;

describe('audio and video extraction (ffmpeg + an OpenAI-compatible transcriber)', () => {
  let dir: string;
  let server: FakeTranscriptionServer;
  let mp3: Buffer;
  let mp4: Buffer;
  let silentMp4: Buffer;
  const transcriber = () => new OpenAiTranscriber({ url: server.url, key: 'sk-test', model: 'whisper-large-v3' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-media-fixtures-'));
    server = await startFakeTranscriptionServer();
    mp3 = ffmpeg(dir, 'tone.mp3', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=7:sample_rate=44100', '-ac', '2']);
    mp4 = ffmpeg(dir, 'clip.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=5', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=5', '-shortest', '-pix_fmt', 'yuv420p']);
    silentMp4 = ffmpeg(dir, 'silent.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=2', '-pix_fmt', 'yuv420p']);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => (server.requests.length = 0));

  it('recognises audio and video by their bytes', () => {
    expect(detectFileType(mp3)).toBe('audio/mpeg');
    expect(detectFileType(mp4)).toBe('video/mp4');
  });

  it('decodes to 16 kHz mono chunks, transcribes each, and shifts the segments by their chunk', async () => {
    const before = mediaTempDirs();
    const doc = await extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber(), chunkSeconds: 3 });
    // 7 s in chunks of 3 s: three requests of 16 kHz mono 16-bit WAV, with the model and the key.
    expect(server.requests).toHaveLength(3);
    for (const r of server.requests) expect(r).toMatchObject({ model: 'whisper-large-v3', authorization: 'Bearer sk-test', responseFormat: 'verbose_json', sampleRate: 16000, channels: 1, bitsPerSample: 16 });
    expect(server.requests.map((r) => Math.round(r.seconds))).toEqual([3, 3, 1]);
    expect(doc.metadata).toMatchObject({ mime_type: 'audio/mpeg', transcription_model: 'whisper-large-v3' });
    expect(doc.media_seconds).toBeGreaterThan(6.9);
    expect(doc.language).toBe('en');
    expect(doc.text).toBe('Part 1.1. Part 1.2. Part 2.1. Part 2.2. Part 3.1.');
    expect(doc.paragraphs).toEqual([{ start: 0, end: doc.text.length, kind: 'TRANSCRIPT', start_seconds: 0, end_seconds: expect.closeTo(7, 0) }]);
    expect(mediaTempDirs()).toBe(before);
  });

  it('splits a long transcript into paragraphs that carry their own times', async () => {
    const { transcriptDocument } = await import('./media.extractor');
    const segments = Array.from({ length: 30 }, (_, i) => ({ start: i * 5, end: i * 5 + 5, text: `Sentence number ${i} of a long talk about tides and harbours.` }));
    const doc = transcriptDocument(segments);
    expect(doc.paragraphs.length).toBeGreaterThan(2);
    for (const p of doc.paragraphs) {
      expect(p.kind).toBe('TRANSCRIPT');
      expect(doc.text.slice(p.start, p.end)).toMatch(/^Sentence number \d+/);
      expect((p.end_seconds ?? 0) > (p.start_seconds ?? 0)).toBe(true);
    }
    expect(doc.paragraphs[1]?.start_seconds).toBe(doc.paragraphs[0]?.end_seconds);
  });

  it('transcribes the sound of a video; a video without sound is a NO_AUDIO field error', async () => {
    const doc = await extractFile(mp4, { filename: 'clip.mp4', transcriber: async () => transcriber() });
    expect(server.requests).toHaveLength(1);
    expect(Math.round(server.requests[0]?.seconds ?? 0)).toBe(5);
    expect(doc.text).toContain('Part 1.1.');
    await expect(extractFile(silentMp4, { filename: 'silent.mp4', transcriber: async () => transcriber() })).rejects.toMatchObject({ code: 'NO_AUDIO' });
  });

  it('refuses without a transcriber, and tells a provider outage (retried) from a refusal (final)', async () => {
    await expect(extractFile(mp3, { filename: 'tone.mp3' })).rejects.toMatchObject({ code: 'NO_TRANSCRIBER' });
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => undefined })).rejects.toBeInstanceOf(ExtractionError);
    server.failNext(503);
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber() })).rejects.toMatchObject({ code: 'TRANSCRIPTION_UNAVAILABLE' });
    server.failNext(401);
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber() })).rejects.toMatchObject({ code: 'TRANSCRIPTION_FAILED' });
    await expect(extractFile(Buffer.concat([mp3.subarray(0, 10), Buffer.alloc(2000, 7)]), { filename: 'broken.mp3', contentType: 'audio/mpeg', transcriber: async () => transcriber() }))
      .rejects.toMatchObject({ code: expect.stringMatching(/CORRUPT_FILE|NO_AUDIO/) });
  });
});
