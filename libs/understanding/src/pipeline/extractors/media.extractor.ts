import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, ExtractedParagraph, ExtractFileInfo, TranscriptSegment } from './extraction.types';

/** Longest media transcribed (4 hours): longer files are refused rather than left running for days. */
export const MAX_MEDIA_SECONDS = 4 * 3600;
const DEFAULT_CHUNK_SECONDS = 600;
/** A paragraph gathers consecutive segments up to about this many characters. */
const PARAGRAPH_CHARS = 600;

interface ProbeResult {
  duration: number;
  audio: boolean;
  video: boolean;
}

/** Runs ffmpeg/ffprobe with a time limit; the child is killed on timeout and its stderr kept for errors. */
function run(cmd: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} could not run: ${err.message} (is ffmpeg installed?)`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new ExtractionError(`${cmd} failed${signal ? ` (${signal})` : ''}: ${lastLine(stderr)}`, 'CORRUPT_FILE'));
    });
  });
}

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).at(-1) ?? 'no output';

async function probe(file: string): Promise<ProbeResult> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', file], 60_000);
  const info = JSON.parse(stdout) as { format?: { duration?: string }; streams?: { codec_type?: string }[] };
  const streams = info.streams ?? [];
  return { duration: Number(info.format?.duration ?? 0) || 0, audio: streams.some((s) => s.codec_type === 'audio'), video: streams.some((s) => s.codec_type === 'video') };
}

/**
 * Audio and video (issue 5): ffmpeg decodes the first audio track to 16 kHz mono PCM in chunks of
 * `chunkSeconds`, each chunk goes to the KB's transcriber, and the segments (shifted by their
 * chunk's start) become TRANSCRIPT paragraphs carrying start/end seconds. Without a configured
 * transcriber the field gets a NO_TRANSCRIBER error; a video without sound, NO_AUDIO. Temporary
 * files live in one directory removed on every path.
 */
export async function extractMedia(data: Buffer, info: ExtractFileInfo, type: string): Promise<ExtractedDocument> {
  const transcriber = await info.transcriber?.();
  if (!transcriber) {
    throw new ExtractionError(
      'Audio and video need a transcriber: set user_keys.openai_compatible (or openai) with a transcription_model in the Knowledge Box model configuration',
      'NO_TRANSCRIBER',
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'kb-media-'));
  try {
    const input = join(dir, 'input');
    await writeFile(input, data);
    const media = await probe(input).catch((err: unknown) => {
      throw err instanceof ExtractionError ? new ExtractionError(`The ${type} file cannot be read: ${err.message}`, 'CORRUPT_FILE') : err;
    });
    if (!media.audio) throw new ExtractionError(media.video ? 'The video has no audio track to transcribe' : 'The file has no audio to transcribe', 'NO_AUDIO');
    if (media.duration > MAX_MEDIA_SECONDS) {
      throw new ExtractionError(`The media lasts ${Math.round(media.duration)} s; at most ${MAX_MEDIA_SECONDS} s are transcribed`, 'TOO_LARGE');
    }
    const chunkSeconds = info.chunkSeconds ?? DEFAULT_CHUNK_SECONDS;
    await run('ffmpeg', [
      '-nostdin', '-v', 'error', '-i', input, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le',
      '-f', 'segment', '-segment_time', String(chunkSeconds), '-reset_timestamps', '1', join(dir, 'chunk-%05d.wav'),
    ], Math.max(120_000, media.duration * 1000));
    const chunks = (await readdir(dir)).filter((f) => /^chunk-\d+\.wav$/.test(f)).sort();
    const segments: TranscriptSegment[] = [];
    let language: string | undefined;
    for (const [i, name] of chunks.entries()) {
      const offset = i * chunkSeconds;
      const result = await transcriber.transcribe(await readFile(join(dir, name)), { filename: name });
      language ??= result.language;
      const parts = result.segments.length > 0 ? result.segments : result.text.trim() ? [{ start: 0, end: Math.min(chunkSeconds, media.duration - offset), text: result.text }] : [];
      for (const s of parts) if (s.text.trim()) segments.push({ start: round(offset + s.start), end: round(offset + s.end), text: s.text.trim() });
    }
    return { ...transcriptDocument(segments), ...(language ? { language } : {}), media_seconds: round(media.duration), metadata: { duration_seconds: String(round(media.duration)), transcription_model: transcriber.model } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (s: number): number => Math.round(s * 1000) / 1000;

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
    paragraphs.push({ start, end: text.length, kind: 'TRANSCRIPT', start_seconds: group[0]?.start ?? 0, end_seconds: group.at(-1)?.end ?? 0 });
  }
  return { text, paragraphs };
}
