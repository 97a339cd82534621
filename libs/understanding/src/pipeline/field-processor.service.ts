import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { createHash } from 'node:crypto';
import {
  ContentSubjects,
  thumbnailBlobKey,
  datetimeText,
  keywordsetText,
  kvText,
  TextFormats,
  type ExtractedFieldData,
  type ProcessFieldErrorDto,
  type ProcessFieldJob,
  type ResolvedStrategies,
  type TextFormat,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { UNDERSTANDING_OPTIONS, type EmbedderFactory, type UnderstandingOptions } from '../understanding.tokens';
import { analyseText, normaliseLanguage, paragraphVectors, type AnalysedText } from './analyse-text';
import type { Embedder } from './analysis';
import { extractedError } from './extracted-error';
import { singleTextExtracted, splitExtracted, type FileReference, type MetadataExtras } from './extracted-shapes';
import { extractText } from './extract-text';
import {
  createTesseractOcr,
  extractFile,
  extractMediaFile,
  extractWebPage,
  fetchPage,
  MAX_MEDIA_FILE_BYTES,
  type ExtractedDocument,
  type ExtractFileInfo,
  type Ocr,
  type Transcriber,
} from './extractors';
import { openFileSource, readFileSource, type FileSource, type MediaSource } from './field-sources';
import { KbEmbeddersService } from '../query/kb-embedders.service';
import { KbTranscribersService } from '../query/kb-transcribers.service';
import { defaultEmbedderFactory } from './analysis/default-embedder';
import { appendNested } from './nested-files';
import { DEFAULT_SANDBOX_LIMITS } from './extractors/sandbox/sandbox-limits';
import { Gate } from '@kb/platform/concurrency';
import { closeExtractionSandbox, configureExtractionSandbox, extractionSandbox } from './extractors/sandbox/extraction-sandbox';

/** A job with the strategies its field names, resolved. */
type Job = ProcessFieldJob & { strategies: ResolvedStrategies };

/** What processing one field gives: its `extracted` record, or a permanent error for the field. */
export type FieldOutcome = { extracted: ExtractedFieldData; language?: string } | { error: ProcessFieldErrorDto };

const FIELD_LETTER = { text: 't', file: 'f', link: 'u', conversation: 'c', key_value: 'k', keywordset: 'w', datetime: 'd' } as const;
const TEXT_MIME: Partial<Record<TextFormat, string>> = {
  HTML: 'text/html',
  MARKDOWN: 'text/markdown',
  KEEP_MARKDOWN: 'text/markdown',
  JSON: 'application/json',
  RST: 'text/x-rst',
};

interface Message {
  ident: string;
  content?: { text?: string; format?: string; attachments?: FileSource[] };
}

// The built-in model is shared by every KB in the process, so one instance serves them all.

/**
 * Turns one field of any type into its `extracted` record: text (by format, or extracted from a
 * file or a fetched page), paragraphs, sentences, language, entities, relations, a summary and one
 * vector per paragraph. Permanent failures (unsupported file, wrong password, forbidden address)
 * come back as the field's error; transient ones (fetch failed, provider down) are thrown so the
 * worker retries the job.
 */
@Injectable()
export class FieldProcessorService implements OnModuleDestroy {
  private ocr: Ocr | undefined;
  /**
   * Jobs reading and parsing a file, page or attachment at once: two per parser process (one
   * parsing, one reading the next), whatever PROCESSING_CONCURRENCY lets text jobs run beside them.
   */
  private readonly files: Gate;
  /** Every semantic model of a KB, the default first. */
  private readonly embedders: (kbid: string) => Promise<Embedder[]>;

  constructor(
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
    @Optional() @Inject(BLOB_STORE) private readonly blobs?: BlobStore,
    @Optional() kbEmbedders?: KbEmbeddersService,
    @Optional() private readonly kbTranscribers?: KbTranscribersService,
    @Optional() @Inject(MESSAGE_BUS) private readonly bus?: MessageBus,
  ) {
    const one: EmbedderFactory | undefined = options.embedderFactory ?? (kbEmbedders ? undefined : defaultEmbedderFactory);
    this.embedders = one ? async (kbid) => [await one(kbid)] : (kbid) => (kbEmbedders as KbEmbeddersService).all(kbid);
    if (options.extractionSandbox) configureExtractionSandbox(options.extractionSandbox);
    this.files = new Gate(2 * (options.extractionSandbox ?? DEFAULT_SANDBOX_LIMITS).workers);
  }

  /** The KB's transcriber, looked up only when a field turns out to be audio or video. */
  private transcriberOf(job: ProcessFieldJob): () => Promise<Transcriber | undefined> {
    return async () => (this.options.transcriberFactory ? this.options.transcriberFactory(job.kbid) : this.kbTranscribers?.get(job.kbid));
  }

  async onModuleDestroy(): Promise<void> {
    await this.ocr?.close();
    this.ocr = undefined;
    await closeExtractionSandbox();
  }

  async process(job: ProcessFieldJob): Promise<FieldOutcome> {
    const started = new Date().toISOString();
    const clock = performance.now();
    try {
      const extracted = await this.extract({ ...job, strategies: await this.strategiesOf(job) }, started);
      // Metered as `pre_processing_time` (milliseconds kept: a short text takes a few).
      extracted.processing_seconds = Math.round(performance.now() - clock) / 1000;
      const language = extracted.metadata.metadata['language'];
      return { extracted, ...(typeof language === 'string' && language ? { language } : {}) };
    } catch (err) {
      const error = extractedError(err);
      if (error) return { error };
      throw err;
    }
  }

  /**
   * The split and extract strategies the field names, read from content (docs/kb-configuration.md);
   * an unknown or deleted one leaves the defaults. A failure to ask is transient (the job is retried).
   */
  private async strategiesOf(job: ProcessFieldJob): Promise<ResolvedStrategies> {
    const split = str(job.value['split_strategy']);
    const extract = str(job.value['extract_strategy']);
    if ((!split && !extract) || !this.bus) return {};
    return this.bus.request(ContentSubjects.resolveStrategies, {
      kbid: job.kbid,
      ...(split ? { split } : {}),
      ...(extract ? { extract } : {}),
    });
  }

  private extract(job: Job, started: string): Promise<ExtractedFieldData> {
    switch (job.field_type) {
      case 'text':
        return this.text(job, started);
      case 'file':
        return this.file(job, started);
      case 'link':
        return this.link(job, started);
      case 'conversation':
        return this.conversation(job, started);
      case 'key_value':
        return this.keyValue(job, started);
      case 'keywordset':
        return this.plain(job, keywordsetText(job.value), started);
      case 'datetime':
        return this.plain(job, datetimeText(job.value), started);
    }
  }

  /** keywordset (one paragraph per keyword) and datetime (its UTC date and time) fields: searched as plain text. */
  private async plain(job: Job, text: string, started: string): Promise<ExtractedFieldData> {
    return this.single(job, this.analyse(job, text, { language: job.language }), { mime_type: 'text/plain', started });
  }

  /** A key_value field is searched by its values: one `key: value` paragraph per key. */
  private async keyValue(job: Job, started: string): Promise<ExtractedFieldData> {
    const values = job.value['values'];
    const text = typeof values === 'object' && values !== null ? kvText(values as Record<string, unknown>) : '';
    return this.single(job, this.analyse(job, text, { language: job.language }), { mime_type: 'text/plain', started });
  }

  private async text(job: Job, started: string): Promise<ExtractedFieldData> {
    const body = str(job.value['body']) ?? '';
    const rawFormat = job.value['format'];
    const format: TextFormat =
      typeof rawFormat === 'string' && (TextFormats as readonly string[]).includes(rawFormat) ? (rawFormat as TextFormat) : 'PLAIN';
    const analysed = this.analyse(job, extractText(body, format), { language: job.language });
    return this.single(job, analysed, { mime_type: TEXT_MIME[format] ?? 'text/plain', started });
  }

  private async file(job: Job, started: string): Promise<ExtractedFieldData> {
    const source = (job.value['file'] ?? {}) as FileSource;
    const language = str(job.value['language']) ?? job.language;
    const info = {
      contentType: source.content_type,
      filename: source.filename,
      password: str(job.value['password']),
      ocr: this.ocrFor(job),
      language,
      ...this.mediaInfo(job),
    };
    const { doc, md5, document, nestedPositions } = await this.files.run(async () => {
      const read = await this.fileDocument(source, info);
      const nested = await appendNested(
        read.doc,
        (n) => extractFile(n.data, { contentType: n.content_type, filename: n.filename, ocr: info.ocr }),
        {
          budgetMs: extractionSandbox().limits.timeoutMs,
        },
      );
      return { ...read, ...nested };
    });
    const thumbnail = await this.storeThumbnail(job, doc);
    const analysed = this.analyse(job, document.text, { paragraphs: document.paragraphs, language: language ?? doc.language });
    const mime = doc.metadata?.['mime_type'] ?? 'application/octet-stream';
    const extracted = await this.single(job, analysed, { mime_type: mime, started, links: doc.links, thumbnail });
    extracted.file = {
      language: analysed.language ?? '',
      md5: source.md5 ?? md5,
      metadata: { ...(doc.metadata ?? {}), ...(doc.pages ? { pages: String(doc.pages) } : {}) },
      nested: Object.fromEntries(Object.keys(nestedPositions).map((name) => [name, name])),
      file_generated: {},
      file_rows_previews: Object.fromEntries(
        Object.entries(doc.rows_previews ?? {}).map(([sheet, preview]) => [sheet, { sheets: { [sheet]: preview } }]),
      ),
      file_pages_previews: { pages: [], positions: [], structures: [] },
      ...(thumbnail ? { file_thumbnail: thumbnail } : {}),
      field: '',
      icon: mime,
      nested_position: nestedPositions,
      nested_list_position: {},
    };
    if (doc.media_seconds !== undefined) extracted.media_seconds = doc.media_seconds;
    return extracted;
  }

  /**
   * A stored recording goes from the blob store to disk (videos are large; memory stays bounded);
   * any other file is read into memory and extracted by its type.
   */
  private async fileDocument(source: FileSource, info: ExtractFileInfo): Promise<{ doc: ExtractedDocument; md5: string }> {
    const opened = await openFileSource(this.blobs, source, { http: this.options.outbound });
    if ('media' in opened) return this.mediaDocument(opened.media, info);
    const doc = await extractFile(opened.bytes.data, { ...info, contentType: opened.bytes.contentType });
    return { doc, md5: createHash('md5').update(opened.bytes.data).digest('hex') };
  }

  /** A recording, streamed to disk (up to MAX_MEDIA_FILE_BYTES) and transcribed from there. */
  private async mediaDocument(media: MediaSource, info: ExtractFileInfo): Promise<{ doc: ExtractedDocument; md5: string }> {
    let md5 = '';
    try {
      const doc = await extractMediaFile(async (path) => void (md5 = await media.spool(path, MAX_MEDIA_FILE_BYTES)), media.type, info);
      return { doc, md5 };
    } finally {
      await media.discard();
    }
  }

  /** What audio and video need: the KB's transcriber (looked up only for media) and the chunk length. */
  private mediaInfo(job: ProcessFieldJob): Pick<ExtractFileInfo, 'transcriber' | 'chunkSeconds'> {
    return {
      transcriber: this.transcriberOf(job),
      ...(this.options.transcriptionChunkSeconds ? { chunkSeconds: this.options.transcriptionChunkSeconds } : {}),
    };
  }

  private async link(job: Job, started: string): Promise<ExtractedFieldData> {
    const uri = str(job.value['uri']) ?? '';
    // A link to a recording streams it to disk; pages and documents are read into memory.
    const { page, doc } = await this.files.run(async () => {
      const page = await fetchPage(uri, {
        headers: strMap(job.value['headers']),
        cookies: strMap(job.value['cookies']),
        http: this.options.outbound,
        media: {},
      });
      const selectors = { css_selector: str(job.value['css_selector']), xpath: str(job.value['xpath']) };
      const fileInfo = {
        contentType: page.contentType,
        ocr: this.ocrFor(job),
        language: str(job.value['language']) ?? job.language,
        ...this.mediaInfo(job),
      };
      const doc =
        page.kind === 'html'
          ? await extractWebPage(page.html, page.finalUrl, selectors)
          : page.kind === 'media'
            ? (await this.mediaDocument(page, fileInfo)).doc
            : await extractFile(page.data, fileInfo);
      return { page, doc };
    });
    const mime = page.kind === 'html' ? 'text/html' : (doc.metadata?.['mime_type'] ?? page.contentType);
    const thumbnail = await this.storeThumbnail(job, doc);
    const analysed = this.analyse(job, doc.text, {
      paragraphs: doc.paragraphs,
      language: str(job.value['language']) ?? job.language ?? doc.language,
    });
    const extracted = await this.single(job, analysed, { mime_type: mime, started, links: doc.links, thumbnail });
    extracted.link = {
      date: started,
      language: analysed.language ?? '',
      title: doc.title ?? '',
      metadata: doc.metadata ?? {},
      ...(thumbnail ? { link_thumbnail: thumbnail } : {}),
      ...(doc.image ? { link_image: { uri: doc.image, size: 0, content_type: '', filename: '', md5: '' } } : {}),
      field: '',
      description: doc.description ?? '',
      type: mime,
      embed: '',
      file_generated: {},
      url: page.finalUrl,
    };
    if (doc.media_seconds !== undefined) extracted.media_seconds = doc.media_seconds;
    return extracted;
  }

  private async conversation(job: Job, started: string): Promise<ExtractedFieldData> {
    const messages = Array.isArray(job.value['messages']) ? (job.value['messages'] as Message[]) : [];
    const splits: { ident: string; analysed: AnalysedText }[] = [];
    let mediaSeconds = 0;
    for (const message of messages) {
      const content = message.content ?? {};
      const parts = [extractText(content.text ?? '', (content.format ?? 'PLAIN') as TextFormat)];
      for (const attachment of content.attachments ?? []) {
        const { text, media_seconds } = await this.attachmentText(attachment, job);
        parts.push(text);
        mediaSeconds += media_seconds ?? 0;
      }
      const text = parts.filter((p) => p.trim()).join('\n\n');
      splits.push({ ident: message.ident, analysed: this.analyse(job, text, { language: job.language, split: message.ident }) });
    }
    const extracted = await this.vectorised(job, async (embedder) => {
      const vectors = await paragraphVectors(
        embedder,
        splits.map((s) => s.analysed),
      );
      return withVectorset(
        splitExtracted(
          splits.map((s, i) => ({ ...s, vectors: vectors[i] ?? [] })),
          { mime_type: 'text/plain', started },
        ),
        embedder,
      );
    });
    if (mediaSeconds > 0) extracted.media_seconds = Math.round(mediaSeconds * 1000) / 1000;
    return extracted;
  }

  /**
   * Attachments carried inline or stored as blobs are read; an external address is not fetched
   * here (a conversation can hold thousands of them), and an unreadable one adds no text.
   */
  private async attachmentText(attachment: FileSource, job: Job): Promise<Pick<ExtractedDocument, 'text' | 'media_seconds'>> {
    if (attachment.payload === undefined && !attachment.uri?.startsWith('blob:')) return { text: '' };
    try {
      return await this.files.run(async () => {
        const bytes = await readFileSource(this.blobs, attachment, {});
        // Voice messages are transcribed when the KB has a transcriber.
        return extractFile(bytes.data, {
          contentType: bytes.contentType,
          filename: attachment.filename,
          ocr: this.ocrFor(job),
          language: job.language,
          ...this.mediaInfo(job),
        });
      });
    } catch (err) {
      if (extractedError(err)) return { text: '' };
      throw err;
    }
  }

  private analyse(
    job: Job,
    text: string,
    o: { paragraphs?: ExtractedDocument['paragraphs']; language?: string; split?: string },
  ): AnalysedText {
    const fieldKey = `${job.rid}/${FIELD_LETTER[job.field_type]}/${job.field_id}${o.split ? `/${o.split}` : ''}`;
    // The field's split strategy, else its extract strategy's split, cuts long paragraphs.
    const split = job.strategies.split ?? job.strategies.extract?.split;
    const chunks = split ? { max: split.max_paragraph, overlap: split.overlap ?? 0 } : undefined;
    return analyseText(text, { paragraphs: o.paragraphs, language: normaliseLanguage(o.language), rid: job.rid, fieldKey, chunks });
  }

  private async single(job: ProcessFieldJob, analysed: AnalysedText, extras: MetadataExtras): Promise<ExtractedFieldData> {
    return this.vectorised(job, async (embedder) => {
      const [vectors] = await paragraphVectors(embedder, [analysed]);
      return withVectorset(singleTextExtracted(analysed, vectors ?? [], extras), embedder);
    });
  }

  /**
   * The field's record vectorised with the KB's default model (`vectors`) and with each of its
   * other semantic models (`vectorsets`, by model): /find searches whichever `vectorset` it names.
   */
  private async vectorised(job: ProcessFieldJob, build: (embedder: Embedder) => Promise<ExtractedFieldData>): Promise<ExtractedFieldData> {
    const [first, ...rest] = await this.embedders(job.kbid);
    const data = await build(first as Embedder);
    for (const embedder of rest) {
      const other = await build(embedder);
      data.vectorsets = { ...(data.vectorsets ?? {}), [embedder.model]: other.vectors };
    }
    return data;
  }

  /**
   * Stored under the field's prefix with the write's seqid: a job of an older write still running
   * never overwrites a newer result's thumbnail; content deletes the one a result no longer names.
   */
  private async storeThumbnail(job: ProcessFieldJob, doc: ExtractedDocument): Promise<FileReference | undefined> {
    if (!doc.thumbnail || !this.blobs) return undefined;
    const key = thumbnailBlobKey(job);
    const { data, content_type } = doc.thumbnail;
    // The size the store reports having written: metered as the KB's storage (stored-artefacts.ts).
    const stat = await this.blobs.put(key, data, { contentType: content_type });
    const filename = content_type === 'image/jpeg' ? 'thumbnail.jpg' : 'thumbnail.png';
    return { uri: `blob:${key}`, size: stat.size, content_type, filename, md5: createHash('md5').update(data).digest('hex') };
  }

  /** One tesseract worker per process, started on the first scanned page or image. */
  /** OCR unless the field's extract strategy turns it off (`ocr: false`). */
  private ocrFor(job: Job): Ocr | undefined {
    return job.strategies.extract?.ocr === false ? undefined : this.getOcr();
  }

  private getOcr(): Ocr | undefined {
    if (this.options.ocrFactory === null) return undefined;
    this.ocr ??= (this.options.ocrFactory ?? (() => createTesseractOcr()))();
    return this.ocr;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function strMap(v: unknown): Record<string, string> | undefined {
  if (!v || typeof v !== 'object') return undefined;
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Names the semantic model that computed the vectors, so the index files them under its vectorset. */
function withVectorset(data: ExtractedFieldData, embedder: Embedder): ExtractedFieldData {
  data.vectors.vectorset = embedder.model;
  data.vectors.similarity = embedder.similarity;
  if (embedder.dimensions) data.vectors.dimension = embedder.dimensions;
  return data;
}
