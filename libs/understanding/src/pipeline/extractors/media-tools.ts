import { spawn } from 'node:child_process';
import { ExtractionError } from './extraction.error';

/** Output kept from a child: ffprobe's JSON is small, and only the end of stderr explains a failure. */
const MAX_STDOUT_CHARS = 1024 * 1024;
const MAX_STDERR_CHARS = 4000;

export interface MediaProbe {
  duration: number;
  audio: boolean;
  video: boolean;
}

/** Why a child program gave no result: it could not start, overran its time, or exited with an error. */
export class ToolFailure extends Error {
  constructor(
    message: string,
    readonly reason: 'unavailable' | 'timeout' | 'failed',
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/**
 * Runs a program (ffmpeg, ffprobe, a local speech model) with a time limit and resolves to its
 * stdout. The child is killed when it overruns (a crafted file can make a decoder spin), and its
 * output is bounded; failures are ToolFailures with the end of stderr.
 */
export function runTool(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (stdout.length < MAX_STDOUT_CHARS) stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-MAX_STDERR_CHARS)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new ToolFailure(`${cmd} could not be started: ${err.message}`, 'unavailable'));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) reject(new ToolFailure(`${cmd} took longer than ${timeoutMs / 1000} s and was stopped`, 'timeout'));
      else if (code === 0) resolve(stdout);
      else reject(new ToolFailure(`${cmd} failed${signal ? ` (${signal})` : ''}: ${lastLine(stderr)}`, 'failed'));
    });
  });
}

/**
 * ffmpeg or ffprobe: one that cannot start at all is a deployment problem (DECODER_UNAVAILABLE),
 * not a fault of the file; one that fails or overruns could not read the file (CORRUPT_FILE).
 */
export async function runMediaTool(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  try {
    return await runTool(cmd, args, timeoutMs);
  } catch (err) {
    if (!(err instanceof ToolFailure)) throw err;
    if (err.reason === 'unavailable')
      throw new ExtractionError(`Audio and video need ${cmd} on the processing workers: ${err.message}`, 'DECODER_UNAVAILABLE');
    throw new ExtractionError(err.message, 'CORRUPT_FILE');
  }
}

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).at(-1) ?? 'no output';

/** Length and kinds of streams; a file ffprobe cannot read is CORRUPT_FILE. */
export async function probeMedia(file: string, timeoutMs = 60_000): Promise<MediaProbe> {
  const stdout = await runMediaTool(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', file],
    timeoutMs,
  );
  let info: { format?: { duration?: string }; streams?: { codec_type?: string }[] };
  try {
    info = JSON.parse(stdout) as typeof info;
  } catch {
    throw new ExtractionError('ffprobe gave an unreadable description of the file', 'CORRUPT_FILE');
  }
  const streams = info.streams ?? [];
  return {
    duration: Number(info.format?.duration ?? 0) || 0,
    audio: streams.some((s) => s.codec_type === 'audio'),
    video: streams.some((s) => s.codec_type === 'video'),
  };
}

export interface DecodeOptions {
  chunkSeconds: number;
  /** The media's length as probed (0 when unknown): the time limit grows with it. */
  durationSeconds: number;
  /** Decoding stops after this many seconds of sound, which bounds the disk the chunks take. */
  limitSeconds: number;
}

/**
 * Decodes the first audio track to 16 kHz mono 16-bit PCM WAV files of `chunkSeconds` each
 * (`<dir>/chunk-00000.wav`…). Decoding runs far faster than real time, so a decoder still busy
 * after the media's own length (at least two minutes) is stuck and is killed.
 */
export async function decodeToChunks(input: string, dir: string, o: DecodeOptions): Promise<void> {
  await runMediaTool(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-i',
      input,
      '-map',
      '0:a:0',
      '-vn',
      '-t',
      String(o.limitSeconds),
      '-ac',
      '1',
      '-ar',
      String(SAMPLE_RATE),
      '-c:a',
      'pcm_s16le',
      '-f',
      'segment',
      '-segment_time',
      String(o.chunkSeconds),
      '-reset_timestamps',
      '1',
      `${dir}/chunk-%05d.wav`,
    ],
    Math.max(120_000, o.durationSeconds * 1000),
  );
}

export const SAMPLE_RATE = 16_000;

/** Seconds of sound in a PCM WAV file, from its `fmt ` and `data` chunks (0 when it is not one). */
export function wavSeconds(wav: Buffer): number {
  if (wav.subarray(0, 4).toString('latin1') !== 'RIFF' || wav.subarray(8, 12).toString('latin1') !== 'WAVE') return 0;
  let bytesPerSecond = 0;
  let dataBytes = 0;
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.subarray(at, at + 4).toString('latin1');
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 16 <= wav.length) bytesPerSecond = wav.readUInt32LE(at + 16);
    if (id === 'data') {
      // A size of 0 or 0xFFFFFFFF means the writer could not seek back: the data runs to the end.
      dataBytes = size === 0 || size === 0xffffffff ? wav.length - at - 8 : Math.min(size, wav.length - at - 8);
      break;
    }
    at += 8 + size + (size % 2);
  }
  return bytesPerSecond ? dataBytes / bytesPerSecond : 0;
}
