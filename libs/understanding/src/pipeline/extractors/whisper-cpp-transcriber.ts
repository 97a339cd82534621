import { constants } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractionError } from './extraction.error';
import type { Transcriber, TranscriptSegment } from './extraction.types';
import { runTool, ToolFailure, wavSeconds } from './media-tools';

/** The whisper.cpp command-line program, as its builds name it since 2024. */
export const WHISPER_CPP_PROGRAM = 'whisper-cli';
const MODEL_FILE = /^ggml-.+\.bin$/;

export interface WhisperCppOptions {
  /** CPU threads per transcription (default: whisper.cpp's own). */
  threads?: number;
  /** Time allowed per chunk: this many times the chunk's length, at least two minutes (default 4). */
  timeFactor?: number;
  /** Where each chunk's temporary directory goes (default the system's temporary directory). */
  tempDir?: string;
}

/**
 * Opens a local speech model folder: the whisper.cpp program (`whisper-cli`) and one model file
 * (`ggml-*.bin`, the first by name when there are several). A folder that cannot serve (missing,
 * no model, no runnable program) is NO_TRANSCRIBER with what is missing, so the field says how to
 * fix the deployment.
 */
export async function openWhisperCppFolder(dir: string, options: WhisperCppOptions = {}): Promise<WhisperCppTranscriber> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new ExtractionError(
      `The speech model folder ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      'NO_TRANSCRIBER',
    );
  }
  const model = names.filter((n) => MODEL_FILE.test(n)).sort()[0];
  if (!model) throw new ExtractionError(`The speech model folder ${dir} holds no whisper.cpp model (a ggml-*.bin file)`, 'NO_TRANSCRIBER');
  const program = join(dir, WHISPER_CPP_PROGRAM);
  try {
    await access(program, constants.X_OK);
  } catch {
    throw new ExtractionError(
      `The speech model folder ${dir} holds no runnable whisper.cpp program (${WHISPER_CPP_PROGRAM})`,
      'NO_TRANSCRIBER',
    );
  }
  return new WhisperCppTranscriber(program, join(dir, model), `whisper.cpp:${model.replace(/^ggml-/, '').replace(/\.bin$/, '')}`, options);
}

interface WhisperCppJson {
  result?: { language?: unknown };
  transcription?: { offsets?: { from?: unknown; to?: unknown }; text?: unknown }[];
}

/**
 * Speech to text with a local whisper.cpp model: each chunk is written to a private temporary
 * directory, `whisper-cli -oj` transcribes it, and its JSON (`transcription[{offsets{from,to} in
 * ms, text}]`, `result.language`) gives the segments. The directory is removed on every path.
 * A run that overruns is TRANSCRIPTION_UNAVAILABLE (a busy machine; retried), one that fails,
 * TRANSCRIPTION_FAILED.
 */
export class WhisperCppTranscriber implements Transcriber {
  constructor(
    private readonly program: string,
    private readonly modelFile: string,
    readonly model: string,
    private readonly options: WhisperCppOptions = {},
  ) {}

  async transcribe(
    audio: Buffer,
    options: { language?: string; filename: string },
  ): Promise<{ text: string; segments: TranscriptSegment[]; language?: string }> {
    const dir = await mkdtemp(join(this.options.tempDir ?? tmpdir(), 'kb-whisper-'));
    try {
      const input = join(dir, 'chunk.wav');
      await writeFile(input, audio);
      const args = ['-m', this.modelFile, '-f', input, '-l', options.language ?? 'auto', '-oj', '-of', join(dir, 'out'), '-np'];
      if (this.options.threads) args.push('-t', String(this.options.threads));
      const timeoutMs = Math.max(120_000, wavSeconds(audio) * 1000 * (this.options.timeFactor ?? 4));
      try {
        await runTool(this.program, args, timeoutMs);
      } catch (err) {
        if (!(err instanceof ToolFailure)) throw err;
        if (err.reason === 'timeout')
          throw new ExtractionError(`The local speech model is too slow: ${err.message}`, 'TRANSCRIPTION_UNAVAILABLE');
        if (err.reason === 'unavailable') throw new ExtractionError(`The local speech model cannot run: ${err.message}`, 'NO_TRANSCRIBER');
        throw new ExtractionError(`The local speech model failed: ${err.message}`, 'TRANSCRIPTION_FAILED');
      }
      return parseWhisperCppJson(await readFile(join(dir, 'out.json'), 'utf8').catch(() => ''));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

export function parseWhisperCppJson(raw: string): { text: string; segments: TranscriptSegment[]; language?: string } {
  let body: WhisperCppJson;
  try {
    body = JSON.parse(raw) as WhisperCppJson;
  } catch {
    throw new ExtractionError('The local speech model wrote no readable transcript', 'TRANSCRIPTION_FAILED');
  }
  const segments = (Array.isArray(body.transcription) ? body.transcription : [])
    .filter((s) => typeof s.text === 'string' && Number.isFinite(Number(s.offsets?.from)) && Number.isFinite(Number(s.offsets?.to)))
    .map((s) => ({ start: Number(s.offsets?.from) / 1000, end: Number(s.offsets?.to) / 1000, text: String(s.text).trim() }))
    .filter((s) => s.text !== '');
  const language =
    typeof body.result?.language === 'string' && /^[a-z]{2,3}$/.test(body.result.language) ? body.result.language : undefined;
  return { text: segments.map((s) => s.text).join(' '), segments, ...(language ? { language } : {}) };
}
