import { OutboundHttp } from '@kb/platform/net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeTranscriptionServer, type FakeTranscriptionServer } from '@kb/platform/testing';
import { ExtractionError } from './extraction.error';
import { extractFile } from './extract-file';
import { OpenAiTranscriber } from './openai-transcriber';
import { detectFileType, detectMediaType } from './detect-file-type';
import type { Transcriber, TranscriptSegment } from './extraction.types';
import { runMediaTool, wavSeconds } from './media-tools';

/** The fake provider is on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => local.close());

/** A transcriber port of the test's own: one long segment per chunk, so each becomes a paragraph. */
class RecordingTranscriber implements Transcriber {
  readonly model = 'recording';
  readonly calls: { seconds: number; language?: string }[] = [];
  async transcribe(
    audio: Buffer,
    options: { language?: string; filename: string },
  ): Promise<{ text: string; segments: TranscriptSegment[] }> {
    const seconds = wavSeconds(audio);
    this.calls.push({ seconds, ...(options.language ? { language: options.language } : {}) });
    const text = `Chunk ${this.calls.length} ${'words '.repeat(110)}`.trim();
    return { text, segments: [{ start: 0.5, end: seconds - 0.25, text }] };
  }
}

/** Media built with ffmpeg itself: a tone, a video with a tone, a video without sound. */
function ffmpeg(dir: string, name: string, args: string[]): Buffer {
  const out = join(dir, name);
  execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args, out]);
  return readFileSync(out);
}

describe('audio and video extraction (ffmpeg + an OpenAI-compatible transcriber)', () => {
  let dir: string;
  let server: FakeTranscriptionServer;
  let mp3: Buffer;
  let mp4: Buffer;
  let silentMp4: Buffer;
  /** Temporary files of the extractions below go here, so a leak shows whatever else runs meanwhile. */
  let work: string;
  const transcriber = () => new OpenAiTranscriber({ url: server.url, key: 'sk-test', model: 'whisper-large-v3', http: local });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-media-fixtures-'));
    work = mkdtempSync(join(tmpdir(), 'kb-media-work-'));
    server = await startFakeTranscriptionServer();
    mp3 = ffmpeg(dir, 'tone.mp3', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=7:sample_rate=44100', '-ac', '2']);
    mp4 = ffmpeg(dir, 'clip.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=160x120:rate=10:duration=5',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=300:duration=5',
      '-shortest',
      '-pix_fmt',
      'yuv420p',
    ]);
    silentMp4 = ffmpeg(dir, 'silent.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=2', '-pix_fmt', 'yuv420p']);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  beforeEach(() => (server.requests.length = 0));

  it('recognises audio and video by their bytes', () => {
    expect(detectFileType(mp3)).toBe('audio/mpeg');
    expect(detectFileType(mp4)).toBe('video/mp4');
  });

  it('decodes to 16 kHz mono chunks, transcribes each, and shifts the segments by their chunk', async () => {
    const doc = await extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber(), chunkSeconds: 3, tempDir: work });
    // 7 s in chunks of 3 s: three requests of 16 kHz mono 16-bit WAV, with the model and the key.
    expect(server.requests).toHaveLength(3);
    for (const r of server.requests)
      expect(r).toMatchObject({
        model: 'whisper-large-v3',
        authorization: 'Bearer sk-test',
        responseFormat: 'verbose_json',
        sampleRate: 16000,
        channels: 1,
        bitsPerSample: 16,
      });
    expect(server.requests.map((r) => Math.round(r.seconds))).toEqual([3, 3, 1]);
    expect(doc.metadata).toMatchObject({ mime_type: 'audio/mpeg', transcription_model: 'whisper-large-v3' });
    expect(doc.media_seconds).toBeGreaterThan(6.9);
    expect(doc.language).toBe('en');
    expect(doc.text).toBe('Part 1.1. Part 1.2. Part 2.1. Part 2.2. Part 3.1.');
    expect(doc.paragraphs).toEqual([
      { start: 0, end: doc.text.length, kind: 'TRANSCRIPT', start_seconds: 0, end_seconds: expect.closeTo(7, 0) },
    ]);
    expect(readdirSync(work)).toEqual([]);
  });

  it('offsets each chunk by the length of the chunks before it, skips a tail without sound, and passes the language on', async () => {
    const tone = ffmpeg(dir, 'tone-6.mp3', ['-f', 'lavfi', '-i', 'sine=frequency=500:duration=6.04']);
    const recording = new RecordingTranscriber();
    const doc = await extractFile(tone, { filename: 'tone.mp3', transcriber: async () => recording, chunkSeconds: 2, language: 'en-GB' });
    // 6.04 s of MP3 in chunks of 2 s: three chunks sent; the last few hundredths of a second are not.
    expect(recording.calls.map((c) => Math.round(c.seconds * 10) / 10)).toEqual([2, 2, 2]);
    expect(recording.calls.every((c) => c.language === 'en')).toBe(true);
    expect(doc.paragraphs).toHaveLength(3);
    doc.paragraphs.forEach((p, i) => {
      expect(p.kind).toBe('TRANSCRIPT');
      expect(doc.text.slice(p.start, p.end)).toMatch(new RegExp(`^Chunk ${i + 1} words`));
      expect(p.start_seconds).toBeCloseTo(i * 2 + 0.5, 1);
      expect(p.end_seconds).toBeCloseTo(i * 2 + 1.75, 1);
    });
    expect(doc.media_seconds).toBeGreaterThan(6);
    expect(doc.metadata).toMatchObject({ duration_seconds: String(doc.media_seconds), transcription_model: 'recording' });
  });

  it('reads the length of a WAV from its header', () => {
    const wav = ffmpeg(dir, 'short.wav', ['-f', 'lavfi', '-i', 'sine=duration=1.5', '-ar', '16000', '-ac', '1']);
    expect(wavSeconds(wav)).toBeCloseTo(1.5, 2);
    expect(wavSeconds(Buffer.from('not a wav file at all'))).toBe(0);
  });

  it('tells audio and video from their first bytes, not ZIPs declared as video', () => {
    expect(detectMediaType(mp3.subarray(0, 4096))).toBe('audio/mpeg');
    expect(detectMediaType(mp4.subarray(0, 4096), 'application/octet-stream', 'clip.bin')).toBe('video/mp4');
    expect(detectMediaType(Buffer.from('%PDF-1.7\n'), 'audio/mpeg')).toBeUndefined();
    expect(detectMediaType(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0]), 'video/mp4')).toBeUndefined();
    expect(detectMediaType(Buffer.from('plain words'), undefined, 'memo.m4a')).toBe('audio/mp4');
  });

  it('stops a decoder that overruns its time, and says so when ffmpeg is missing', async () => {
    const started = Date.now();
    await expect(
      runMediaTool('ffmpeg', ['-nostdin', '-re', '-f', 'lavfi', '-i', 'sine=duration=60', '-f', 'null', '-'], 300),
    ).rejects.toMatchObject({
      code: 'CORRUPT_FILE',
      message: 'ffmpeg took longer than 0.3 s and was stopped',
    });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(runMediaTool('ffmpeg-not-installed', ['-version'], 5000)).rejects.toMatchObject({
      code: 'DECODER_UNAVAILABLE',
      message: expect.stringMatching(
        /^Audio and video need ffmpeg-not-installed on the processing workers: ffmpeg-not-installed could not be started/,
      ),
    });
  });

  it('splits a long transcript into paragraphs that carry their own times', async () => {
    const { transcriptDocument } = await import('./media.extractor');
    const segments = Array.from({ length: 30 }, (_, i) => ({
      start: i * 5,
      end: i * 5 + 5,
      text: `Sentence number ${i} of a long talk about tides and harbours.`,
    }));
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
    await expect(
      extractFile(silentMp4, { filename: 'silent.mp4', transcriber: async () => transcriber(), tempDir: work }),
    ).rejects.toMatchObject({ code: 'NO_AUDIO' });
    expect(readdirSync(work)).toEqual([]);
  });

  it('refuses without a transcriber, and tells a provider outage (retried) from a refusal (final)', async () => {
    await expect(extractFile(mp3, { filename: 'tone.mp3' })).rejects.toMatchObject({ code: 'NO_TRANSCRIBER' });
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => undefined })).rejects.toBeInstanceOf(ExtractionError);
    server.failNext(503);
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber(), tempDir: work })).rejects.toMatchObject({
      code: 'TRANSCRIPTION_UNAVAILABLE',
    });
    server.failNext(401);
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: async () => transcriber(), tempDir: work })).rejects.toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
    });
    await expect(
      extractFile(Buffer.concat([mp3.subarray(0, 10), Buffer.alloc(2000, 7)]), {
        filename: 'broken.mp3',
        contentType: 'audio/mpeg',
        transcriber: async () => transcriber(),
        tempDir: work,
      }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/CORRUPT_FILE|NO_AUDIO/) });
    expect(readdirSync(work)).toEqual([]);
  });
});
