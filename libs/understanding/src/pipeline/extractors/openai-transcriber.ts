import { httpFailure, OutboundError, outboundHttp, type OutboundHttp } from '@kb/platform/net';
import { ExtractionError } from './extraction.error';
import type { Transcriber, TranscriptSegment } from './extraction.types';

export interface OpenAiTranscriberConfig {
  /** Base URL of an OpenAI-compatible API (…/v1). */
  url: string;
  key?: string;
  model: string;
  timeoutMs?: number;
  /** The guarded outbound client (default: the process's). */
  http?: OutboundHttp;
}

/** A transcript is text: a provider answering more than this is not answering the question. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * Speech to text through an OpenAI-compatible `POST {url}/audio/transcriptions` (multipart: `file`,
 * `model`, `response_format=verbose_json`, optional `language`), reading `segments[{start, end,
 * text}]` and `language`, or only `text` from servers without segments. 429, 5xx and network
 * failures are TRANSCRIPTION_UNAVAILABLE (the job is retried); other refusals, TRANSCRIPTION_FAILED.
 * Errors name the service and the status, never the service's answer (it can come from an internal
 * address an operator allowed); an address the policy refuses is FORBIDDEN_ADDRESS, not retried.
 */
export class OpenAiTranscriber implements Transcriber {
  constructor(private readonly config: OpenAiTranscriberConfig) {}

  get model(): string {
    return this.config.model;
  }

  async transcribe(
    audio: Buffer,
    options: { language?: string; filename: string },
  ): Promise<{ text: string; segments: TranscriptSegment[]; language?: string }> {
    const form = new FormData();
    form.append(
      'file',
      new Blob([audio], { type: 'audio/wav' }),
      options.filename.endsWith('.wav') ? options.filename : `${options.filename}.wav`,
    );
    form.append('model', this.config.model);
    form.append('response_format', 'verbose_json');
    if (options.language) form.append('language', options.language);
    const url = `${this.config.url.replace(/\/+$/, '')}/audio/transcriptions`;
    let res: Response;
    try {
      res = await (this.config.http ?? outboundHttp()).fetch(url, {
        method: 'POST',
        body: form,
        timeoutMs: this.config.timeoutMs ?? 300_000,
        maxBytes: MAX_ANSWER_BYTES,
        headers: this.config.key ? { authorization: `Bearer ${this.config.key}` } : {},
      });
    } catch (err) {
      if (err instanceof OutboundError && err.code === 'FORBIDDEN_ADDRESS')
        throw new ExtractionError(`The transcription service at ${url} is not reachable: ${err.message}`, 'FORBIDDEN_ADDRESS');
      throw new ExtractionError(
        `The transcription service at ${url} did not answer: ${(err as Error).message}`,
        'TRANSCRIPTION_UNAVAILABLE',
      );
    }
    const provider = `The transcription service at ${new URL(url).host}`;
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      const retryable = res.status === 429 || res.status >= 500;
      throw new ExtractionError(httpFailure(provider, res.status), retryable ? 'TRANSCRIPTION_UNAVAILABLE' : 'TRANSCRIPTION_FAILED');
    }
    let raw: string;
    try {
      raw = await res.text();
    } catch (err) {
      throw new ExtractionError(`${provider} failed while answering: ${(err as Error).message}`, 'TRANSCRIPTION_UNAVAILABLE');
    }
    let body: { text?: unknown; segments?: unknown; language?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      throw new ExtractionError('The transcription service answered something other than JSON', 'TRANSCRIPTION_FAILED');
    }
    const segments = Array.isArray(body.segments)
      ? (body.segments as { start?: unknown; end?: unknown; text?: unknown }[])
          .filter((s) => typeof s.text === 'string' && Number.isFinite(Number(s.start)) && Number.isFinite(Number(s.end)))
          .map((s) => ({ start: Number(s.start), end: Number(s.end), text: String(s.text) }))
      : [];
    const language = typeof body.language === 'string' ? isoLanguage(body.language) : undefined;
    return {
      text: typeof body.text === 'string' ? body.text : segments.map((s) => s.text).join(' '),
      segments,
      ...(language ? { language } : {}),
    };
  }
}

/** OpenAI's verbose_json names the language ("english"); the pipeline keeps ISO 639-1 codes. */
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en',
  spanish: 'es',
  french: 'fr',
  german: 'de',
  italian: 'it',
  portuguese: 'pt',
  dutch: 'nl',
  catalan: 'ca',
  arabic: 'ar',
  chinese: 'zh',
  japanese: 'ja',
  korean: 'ko',
  russian: 'ru',
  polish: 'pl',
  swedish: 'sv',
  danish: 'da',
  norwegian: 'no',
  finnish: 'fi',
  turkish: 'tr',
  greek: 'el',
  hindi: 'hi',
  basque: 'eu',
  galician: 'gl',
  romanian: 'ro',
  czech: 'cs',
  hungarian: 'hu',
  ukrainian: 'uk',
  hebrew: 'he',
  indonesian: 'id',
  vietnamese: 'vi',
};

export function isoLanguage(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(v)) return v;
  return LANGUAGE_NAMES[v];
}
