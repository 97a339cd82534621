import busboy from 'busboy';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server learned of one uploaded WAV file (from its header). */
export interface ReceivedAudio {
  model: string;
  language?: string;
  responseFormat?: string;
  authorization?: string;
  filename?: string;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  seconds: number;
}

export interface FakeTranscriptionServer {
  /** `http://127.0.0.1:<port>/v1`: an OpenAI-compatible client's base url. */
  url: string;
  requests: ReceivedAudio[];
  /** The next `count` requests are answered with this status (and an error body). */
  failNext(status: number, count?: number): void;
  close(): Promise<void>;
}

function wavInfo(data: Buffer): Pick<ReceivedAudio, 'sampleRate' | 'channels' | 'bitsPerSample' | 'seconds'> {
  if (data.subarray(0, 4).toString('latin1') !== 'RIFF' || data.subarray(8, 12).toString('latin1') !== 'WAVE')
    return { sampleRate: 0, channels: 0, bitsPerSample: 0, seconds: 0 };
  let at = 12;
  let fmt = { sampleRate: 0, channels: 0, bitsPerSample: 0 };
  let dataBytes = 0;
  while (at + 8 <= data.length) {
    const id = data.subarray(at, at + 4).toString('latin1');
    const size = data.readUInt32LE(at + 4);
    if (id === 'fmt ')
      fmt = { channels: data.readUInt16LE(at + 10), sampleRate: data.readUInt32LE(at + 12), bitsPerSample: data.readUInt16LE(at + 22) };
    if (id === 'data') dataBytes = Math.min(size, data.length - at - 8);
    at += 8 + size + (size % 2);
  }
  const bytesPerSecond = fmt.sampleRate * fmt.channels * (fmt.bitsPerSample / 8);
  return { ...fmt, seconds: bytesPerSecond ? dataBytes / bytesPerSecond : 0 };
}

/**
 * A local server speaking OpenAI's `POST /v1/audio/transcriptions` (multipart in, `verbose_json`
 * out). It cannot recognise speech: it answers one segment per started 2 seconds of the WAV it was
 * sent, "Part <request>.<n>.", with times inside the file, which is what tests of offsets need.
 */
export async function startFakeTranscriptionServer(): Promise<FakeTranscriptionServer> {
  const requests: ReceivedAudio[] = [];
  let failures: { status: number; count: number } | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/audio/transcriptions')) return reply(404, { error: { message: 'not found' } });
    const fields: Record<string, string> = {};
    const files: { filename: string; data: Buffer }[] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers });
    } catch {
      return reply(400, { error: { message: 'expected multipart/form-data' } });
    }
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => files.push({ filename: info.filename, data: Buffer.concat(chunks) }));
    });
    parser.on('close', () => {
      if (failures && failures.count > 0) {
        failures.count -= 1;
        return reply(failures.status, { error: { message: `failing on purpose (${failures.status})` } });
      }
      const file = files[0];
      if (!file || !fields['model']) return reply(400, { error: { message: 'file and model are required' } });
      const info = wavInfo(file.data);
      requests.push({
        model: fields['model'],
        ...(fields['language'] ? { language: fields['language'] } : {}),
        ...(fields['response_format'] ? { responseFormat: fields['response_format'] } : {}),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        filename: file.filename,
        ...info,
      });
      const n = requests.length;
      const segments = Array.from({ length: Math.max(1, Math.ceil(info.seconds / 2)) }, (_, i) => ({
        id: i,
        start: i * 2,
        end: Math.min((i + 1) * 2, info.seconds),
        text: ` Part ${n}.${i + 1}.`,
      }));
      reply(200, { task: 'transcribe', language: 'english', duration: info.seconds, text: segments.map((s) => s.text).join(''), segments });
    });
    req.pipe(parser);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (status, count = 1) => (failures = { status, count }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
