import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, ExtractedParagraph, ExtractFileInfo, TranscriptSegment } from './extraction.types';
import { decodeToChunks, probeMedia, SAMPLE_RATE, wavSeconds } from './media-tools';

/** Longest media transcribed (4 hours): longer files are refused rather than left running for days. */
export const MAX_MEDIA_SECONDS = 4 * 3600;
const DEFAULT_CHUNK_SECONDS = 600;
/**
 * A tail chunk shorter than this is not sent: it holds no speech, and OpenAI refuses audio under
 * 0.1 s with a 400 that would fail the whole field.
 */
const MIN_CHUNK_SECONDS = 0.1;
const PCM_BYTES_PER_SECOND = SAMPLE_RATE * 2;
/** A paragraph gathers consecutive segments up to about this many characters. */
const PARAGRAPH_CHARS = 600;

/** The media's bytes, or a writer that puts them at a path (a large upload streamed from the blob store). */
export type MediaSource = Buffer | ((path: string) => Promise<void>);

export type MediaInfo = Pick<ExtractFileInfo, 'transcriber' | 'chunkSeconds' | 'language' | 'tempDir'>;

/**
 * Audio and video (issue 5): ffmpeg decodes the first audio track to 16 kHz mono PCM in chunks of
 * `chunkSeconds`, each chunk goes to the KB's transcriber, and the segments (shifted by the length
 * of the chunks before theirs) become TRANSCRIPT paragraphs carrying start/end seconds. Without a
 * configured transcriber the field gets a NO_TRANSCRIBER error; a video without sound, NO_AUDIO.
 * Temporary files live in one directory removed on every path; one chunk at a time is in memory.
 */
export async function extractMedia(source: MediaSource, info: MediaInfo, type: string): Promise<ExtractedDocument> {
  const transcriber = await info.transcriber?.();
  if (!transcriber) {
    throw new ExtractionError(
      'Audio and video need a transcriber: set user_keys.openai_compatible (or openai) with a transcription_model in the Knowledge Box model configuration, ' +
        'or give the processing workers a local speech model folder (TRANSCRIPTION_MODEL_DIR)',
      'NO_TRANSCRIBER',
    );
  }
  const dir = await mkdtemp(join(info.tempDir ?? tmpdir(), 'kb-media-'));
  try {
    const input = join(dir, 'input');
    if (Buffer.isBuffer(source)) await writeFile(input, source);
    else await source(input);
    const media = await probeMedia(input).catch((err: unknown) => {
      throw err instanceof ExtractionError && err.code === 'CORRUPT_FILE'
        ? new ExtractionError(`The ${type} file cannot be read: ${err.message}`, 'CORRUPT_FILE')
        : err;
    });
    if (!media.audio)
      throw new ExtractionError(
        media.video ? 'The video has no audio track to transcribe' : 'The file has no audio to transcribe',
        'NO_AUDIO',
      );
    if (media.duration > MAX_MEDIA_SECONDS) throw tooLong(media.duration);
    const chunkSeconds = info.chunkSeconds ?? DEFAULT_CHUNK_SECONDS;
    // A duration ffprobe cannot tell (some raw streams) is checked on the decoded sound instead.
    await decodeToChunks(input, dir, { chunkSeconds, durationSeconds: media.duration, limitSeconds: MAX_MEDIA_SECONDS + 1 });
    await rm(input, { force: true });
    const chunks = (await readdir(dir)).filter((f) => /^chunk-\d+\.wav$/.test(f)).sort();
    const decodedBytes = (await Promise.all(chunks.map(async (name) => (await stat(join(dir, name))).size))).reduce((a, b) => a + b, 0);
    if (decodedBytes / PCM_BYTES_PER_SECOND > MAX_MEDIA_SECONDS + 1) throw tooLong(decodedBytes / PCM_BYTES_PER_SECOND);
    const language = primaryLanguage(info.language);
    const segments: TranscriptSegment[] = [];
    let detected: string | undefined;
    let offset = 0;
    for (const name of chunks) {
      const wav = await readFile(join(dir, name));
      const seconds = wavSeconds(wav);
      if (seconds >= MIN_CHUNK_SECONDS) {
        const result = await transcriber.transcribe(wav, { filename: name, ...(language ? { language } : {}) });
        detected ??= result.language;
        const parts =
          result.segments.length > 0 ? result.segments : result.text.trim() ? [{ start: 0, end: seconds, text: result.text }] : [];
        for (const s of parts)
          if (s.text.trim())
            segments.push({ start: round(offset + s.start), end: round(offset + Math.min(s.end, seconds)), text: s.text.trim() });
      }
      // Chunk lengths, not chunk numbers: the segment muxer cuts at packet boundaries.
      offset += seconds;
      await rm(join(dir, name), { force: true });
    }
    const duration = round(media.duration || offset);
    return {
      ...transcriptDocument(segments),
      ...(detected ? { language: detected } : {}),
      media_seconds: duration,
      metadata: { duration_seconds: String(duration), transcription_model: transcriber.model },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const tooLong = (seconds: number): ExtractionError =>
  new ExtractionError(`The media lasts ${Math.round(seconds)} s or more; at most ${MAX_MEDIA_SECONDS} s are transcribed`, 'TOO_LARGE');

const round = (s: number): number => Math.round(s * 1000) / 1000;

/** Transcription APIs take ISO 639-1 codes: 'en-GB' → 'en'. */
function primaryLanguage(language: string | undefined): string | undefined {
  const primary = language?.trim().toLowerCase().split(/[-_]/)[0];
  return primary && /^[a-z]{2,3}$/.test(primary) ? primary : undefined;
}

/** Segments → text with one paragraph per run of segments (a blank line between paragraphs). */
export function transcriptDocument(segments: TranscriptSegment[]): Pick<ExtractedDocument, 'text' | 'paragraphs'> {
  const groups: TranscriptSegment[][] = [];
  for (const s of segments) {
    const current = groups.at(-1);
    const length = current ? current.reduce((n, x) => n + x.text.length + 1, 0) : Infinity;
    if (!current || length + s.text.length > PARAGRAPH_CHARS) groups.push([s]);
    else current.push(s);
  }
  let text = '';
  const paragraphs: ExtractedParagraph[] = [];
  for (const group of groups) {
    if (text) text += '\n\n';
    const start = text.length;
    text += group.map((s) => s.text).join(' ');
    paragraphs.push({
      start,
      end: text.length,
      kind: 'TRANSCRIPT',
      start_seconds: group[0]?.start ?? 0,
      end_seconds: group.at(-1)?.end ?? 0,
    });
  }
  return { text, paragraphs };
}
