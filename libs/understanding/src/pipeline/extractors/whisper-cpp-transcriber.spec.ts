import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractFile } from './extract-file';
import { wavSeconds } from './media-tools';
import { openWhisperCppFolder, parseWhisperCppJson } from './whisper-cpp-transcriber';

/**
 * No speech model ships offline, so the folder's program is a stand-in speaking whisper.cpp's
 * command line: it keeps the WAV it was given and its arguments, and writes `-of <out>.json` in
 * whisper.cpp's shape (offsets in milliseconds). A FAIL file in the folder makes it fail.
 */
const FAKE_WHISPER_CLI = `#!/bin/sh
here=$(dirname "$0")
while [ $# -gt 0 ]; do
  case "$1" in
    -m) model="$2"; shift 2;;
    -f) input="$2"; shift 2;;
    -l) lang="$2"; shift 2;;
    -of) out="$2"; shift 2;;
    *) shift;;
  esac
done
if [ -f "$here/FAIL" ]; then echo "whisper_init_from_file: failed to load model" >&2; exit 3; fi
echo "$model $lang" >> "$here/calls.txt"
cp "$input" "$here/last.wav"
cat > "$out.json" <<JSON
{"result":{"language":"en"},"transcription":[
 {"timestamps":{"from":"00:00:00,000","to":"00:00:01,000"},"offsets":{"from":0,"to":1000},"text":" Hello from the folder."},
 {"timestamps":{"from":"00:00:01,000","to":"00:00:02,500"},"offsets":{"from":1000,"to":2500},"text":" Second line."}]}
JSON
`;

const wavFormat = (wav: Buffer) => ({
  channels: wav.readUInt16LE(22),
  sampleRate: wav.readUInt32LE(24),
  bitsPerSample: wav.readUInt16LE(34),
});

describe('local speech model folder (whisper.cpp)', () => {
  let root: string;
  let mp3: Buffer;

  const folder = (files: { program?: boolean; model?: string }): string => {
    const dir = mkdtempSync(join(root, 'model-'));
    if (files.program) {
      writeFileSync(join(dir, 'whisper-cli'), FAKE_WHISPER_CLI);
      chmodSync(join(dir, 'whisper-cli'), 0o755);
    }
    if (files.model) writeFileSync(join(dir, files.model), 'not really weights');
    return dir;
  };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kb-whisper-spec-'));
    execFileSync('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=5',
      '-ac',
      '2',
      join(root, 'tone.mp3'),
    ]);
    mp3 = readFileSync(join(root, 'tone.mp3'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    ['a missing folder', () => join(root, 'nowhere'), /cannot be read \(ENOENT\)/],
    ['a folder without a model', () => folder({ program: true }), /holds no whisper\.cpp model \(a ggml-\*\.bin file\)/],
    ['a folder without the program', () => folder({ model: 'ggml-base.bin' }), /holds no runnable whisper\.cpp program \(whisper-cli\)/],
  ])('%s cannot transcribe, and the field says why', async (_what, dir, message) => {
    const path = dir();
    await expect(openWhisperCppFolder(path)).rejects.toMatchObject({ code: 'NO_TRANSCRIBER', message: expect.stringMatching(message) });
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: () => openWhisperCppFolder(path) })).rejects.toMatchObject({
      code: 'NO_TRANSCRIBER',
    });
  });

  it("transcribes 16 kHz mono chunks with the folder's model, offsetting each chunk", async () => {
    const dir = folder({ program: true, model: 'ggml-base.en.bin' });
    const work = mkdtempSync(join(root, 'work-'));
    const transcriber = await openWhisperCppFolder(dir, { tempDir: work });
    expect(transcriber.model).toBe('whisper.cpp:base.en');
    const doc = await extractFile(mp3, {
      filename: 'tone.mp3',
      transcriber: async () => transcriber,
      chunkSeconds: 3,
      language: 'en-US',
      tempDir: work,
    });
    expect(readFileSync(join(dir, 'calls.txt'), 'utf8').trim().split('\n')).toEqual([
      `${join(dir, 'ggml-base.en.bin')} en`,
      `${join(dir, 'ggml-base.en.bin')} en`,
    ]);
    const last = readFileSync(join(dir, 'last.wav'));
    expect(wavFormat(last)).toEqual({ channels: 1, sampleRate: 16000, bitsPerSample: 16 });
    expect(wavSeconds(last)).toBeCloseTo(2, 1);
    expect(doc.text).toBe('Hello from the folder. Second line. Hello from the folder. Second line.');
    expect(doc.paragraphs).toEqual([
      { start: 0, end: doc.text.length, kind: 'TRANSCRIPT', start_seconds: 0, end_seconds: expect.closeTo(5, 1) },
    ]);
    expect(doc.language).toBe('en');
    expect(doc.metadata).toMatchObject({ transcription_model: 'whisper.cpp:base.en' });
    // Neither the decoded chunks nor whisper's own files stay behind.
    expect(readdirSync(work)).toEqual([]);
  });

  it("a failing model is the field's error with what the program said; without a language it detects one", async () => {
    const dir = folder({ program: true, model: 'ggml-tiny.bin' });
    writeFileSync(join(dir, 'FAIL'), '');
    await expect(extractFile(mp3, { filename: 'tone.mp3', transcriber: () => openWhisperCppFolder(dir) })).rejects.toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
      message: expect.stringContaining('failed to load model'),
    });
    rmSync(join(dir, 'FAIL'));
    await extractFile(mp3, { filename: 'tone.mp3', transcriber: () => openWhisperCppFolder(dir) });
    expect(readFileSync(join(dir, 'calls.txt'), 'utf8')).toContain(' auto');
    expect(existsSync(join(dir, 'last.wav'))).toBe(true);
  });

  it("reads whisper.cpp's JSON: offsets in milliseconds, blank segments dropped, an unreadable file refused", () => {
    expect(
      parseWhisperCppJson(
        '{"result":{"language":"de"},"transcription":[{"offsets":{"from":250,"to":1750},"text":" Guten Tag. "},{"offsets":{"from":1750,"to":2000},"text":"  "}]}',
      ),
    ).toEqual({
      text: 'Guten Tag.',
      segments: [{ start: 0.25, end: 1.75, text: 'Guten Tag.' }],
      language: 'de',
    });
    expect(() => parseWhisperCppJson('')).toThrow(/no readable transcript/);
  });
});
