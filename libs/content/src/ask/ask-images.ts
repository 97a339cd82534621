import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ASK_IMAGE_LIMITS, fieldBlobPrefix, ragImagesStrategiesOf, UnderstandingSubjects, type AskRequest } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { Issues } from '../search/query/issues';
import type { GenerationImage, Generator } from './generation';
import { blobAtMost, conversationImages, type MessageContextItem } from './conversation-images';
import { PageImageCache, PageRenderGates, RenderBusy, type PageImage } from './page-renders';

/** A context paragraph as far as images are concerned: its key, resource and field (`f/<id>`). */
export interface ImageContextItem {
  key: string;
  rid: string;
  field?: string;
  /** The paragraph's page (1-based; 0 or absent when it has none). */
  page?: number;
  /** Paragraph kind (TEXT, OCR, TABLE…). */
  kind?: string;
}

type FileRef = { rid: string; fieldId: string; key: string; page?: number };

/** An image a strategy would have added but did not, with why (the debug item's `predict_request.skipped_images`). */
export interface SkippedImage {
  key: string;
  reason: string;
}

/** What rag_images_strategies add: the images, and those skipped for lack of render capacity. */
export interface StrategyImages {
  images: GenerationImage[];
  skipped: SkippedImage[];
}

/** A file field of the context: its content type and generation (write sequence and modification time). */
/** A file field's stored content type, its generation, and the thumbnail its last processing result stored. */
type FileInfo = { type: string; generation: string; thumbnail: string | null };

/** Stored previews are JPEG/PNG thumbnails of a few hundred kB at most; anything larger is not one. */
const MAX_PREVIEW_BYTES = 2 * 1024 * 1024;

/**
 * The images of an /ask (docs/ask.md "Images"): those the caller sent (extra_context_images,
 * query_image) and those rag_images_strategies add from the KB. Strategy images are only looked
 * up for paragraphs already in the context, which retrieval filtered by security groups and
 * hidden resources, so an image of something the caller cannot see is never read.
 */
@Injectable()
export class AskImages {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
  ) {}

  /** Page renders per KB at once (the sandbox's workers are every tenant's), and pages rendered recently. */
  readonly renders = new PageRenderGates();
  readonly pageCache = new PageImageCache();

  /**
   * Refuses what the generator cannot do: images the caller sent need a provider that reads them
   * (the built-in extractive model cannot). Strategies never refuse: without a provider they add nothing.
   */
  check(body: AskRequest, generator: Generator | undefined, issues: Issues): void {
    if (!generator || generator.images) return;
    const sent = { extra_context_images: (body.extra_context_images?.length ?? 0) > 0, query_image: !!body.query_image };
    for (const [member, given] of Object.entries(sent))
      if (given)
        issues.issue(
          member,
          'Not supported by the built-in extractive model: images need a generative provider that reads them (generative_model with user_keys)',
          'not_supported',
        );
  }

  /** The caller's images, in the order sent; query_image last. */
  requested(body: AskRequest): GenerationImage[] {
    const out: GenerationImage[] = (body.extra_context_images ?? []).map((image, i) => ({
      mediaType: image.content_type,
      data: image.b64encoded,
      key: `extra_context_images/${i}`,
    }));
    if (body.query_image) out.push({ mediaType: body.query_image.content_type, data: body.query_image.b64encoded, key: 'query_image' });
    return out;
  }

  /**
   * The images rag_images_strategies add, in context order, at most ASK_IMAGE_LIMITS.maxStrategyImages:
   * - page_image: the pages of the context's PDF paragraphs (distinct pages, at most `count`),
   *   rendered on demand by the understanding service (PNG ≤ 1024 px);
   * - tables: the pages of TABLE paragraphs of PDFs (none today: PDF paragraphs are never TABLE);
   * - paragraph_image: for paragraphs of image files, the preview processing stored (≤ 512 px
   *   JPEG, made in the extraction sandbox), so no uploaded bytes are decoded here.
   */
  async fromStrategies(kbid: string, body: AskRequest, context: ImageContextItem[], signal?: AbortSignal): Promise<StrategyImages> {
    const none: StrategyImages = { images: [], skipped: [] };
    const strategies = ragImagesStrategiesOf(body.rag_images_strategies);
    if (!strategies.paragraphImages && !strategies.pageImages && !strategies.tables) return none;
    const files = context.filter((c) => c.rid && c.field?.startsWith('f/'));
    if (!files.length) return none;
    const infos = await this.fileInfos(kbid, files);
    const typeOf = (c: ImageContextItem) => infos.get(`${c.rid}/${(c.field as string).slice(2)}`)?.type ?? '';
    const pages: FileRef[] = [];
    const addPages = (items: ImageContextItem[], max: number) => {
      for (const c of items) {
        if (pages.length >= max) break;
        if (!c.page || typeOf(c) !== 'application/pdf') continue;
        const ref = { rid: c.rid, fieldId: (c.field as string).slice(2), key: `${c.key}/page/${c.page}`, page: c.page };
        if (!pages.some((p) => p.rid === ref.rid && p.fieldId === ref.fieldId && p.page === ref.page)) pages.push(ref);
      }
    };
    if (strategies.pageImages) addPages(files, strategies.pageImages);
    if (strategies.tables)
      addPages(
        files.filter((c) => c.kind === 'TABLE'),
        ASK_IMAGE_LIMITS.maxStrategyImages,
      );
    const pictures: FileRef[] = [];
    if (strategies.paragraphImages) {
      for (const c of files) {
        const fieldId = (c.field as string).slice(2);
        if (typeOf(c).startsWith('image/') && !pictures.some((p) => p.rid === c.rid && p.fieldId === fieldId))
          pictures.push({ rid: c.rid, fieldId, key: c.key });
      }
    }
    const out: StrategyImages = { images: [], skipped: [] };
    for (const ref of [...pages, ...pictures]) {
      if (out.images.length >= ASK_IMAGE_LIMITS.maxStrategyImages) break;
      signal?.throwIfAborted();
      const info = infos.get(`${ref.rid}/${ref.fieldId}`);
      const image = ref.page
        ? await this.page(kbid, ref, info?.generation ?? '', out.skipped, signal)
        : await this.preview(
            info?.thumbnail ?? fieldBlobPrefix({ kbid, rid: ref.rid, field_type: 'file', field_id: ref.fieldId }) + 'thumbnail',
          );
      if (image) out.images.push({ ...image, key: ref.key });
    }
    return out;
  }

  /** The images attached to the context's conversation messages (the conversation strategy's attachments_images). */
  async fromConversation(kbid: string, context: MessageContextItem[], signal?: AbortSignal): Promise<GenerationImage[]> {
    return conversationImages({ ds: this.ds, blobs: this.blobs, logger: this.logger }, kbid, context, signal);
  }

  /** The stored content type and generation of each file field of the context (`<rid>/<field id>`). */
  private async fileInfos(kbid: string, items: ImageContextItem[]): Promise<Map<string, FileInfo>> {
    const ids = [...new Set(items.map((c) => `${c.rid}/${(c.field as string).slice(2)}`))];
    const rows = (await this.ds.query(
      `SELECT f.rid::text || '/' || f.field_id AS id, f.value->'file'->>'content_type' AS type,
              f.seqid::text || '@' || (extract(epoch FROM f.modified_at) * 1000000)::bigint::text AS generation,
              (SELECT k FROM jsonb_object_keys(f.artefacts) AS k WHERE k LIKE '%/thumbnails/%' ORDER BY k DESC LIMIT 1) AS thumbnail
         FROM content.fields f
        WHERE f.kbid = $1 AND f.field_type = 'file' AND (f.rid::text || '/' || f.field_id) = ANY($2::text[])`,
      [kbid, ids],
    )) as { id: string; type: string | null; generation: string; thumbnail: string | null }[];
    // The thumbnail is keyed by the write that made it (thumbnails/{seqid}); a field processed before
    // that kept it under `thumbnail`, which `preview` reads when the field's record names none.
    return new Map(rows.map((r) => [r.id, { type: (r.type ?? '').toLowerCase(), generation: r.generation, thumbnail: r.thumbnail }]));
  }

  /**
   * A rendered page: from the cache when this generation of the field was rendered recently, else
   * rendered in the KB's turn. A page that cannot be had (no kept PDF, a render failure) adds
   * nothing; one whose KB's renders stay busy past the wait is skipped and noted in `skipped`.
   */
  private async page(
    kbid: string,
    ref: FileRef,
    generation: string,
    skipped: SkippedImage[],
    signal?: AbortSignal,
  ): Promise<PageImage | undefined> {
    const key = { kbid, rid: ref.rid, fieldId: ref.fieldId, page: ref.page as number, generation };
    const cached = this.pageCache.get(key);
    if (cached) return cached;
    try {
      return await this.renders.run(
        kbid,
        async () => {
          // Another answer may have rendered it while this one waited its turn.
          const done = this.pageCache.get(key);
          if (done) return done;
          const { image } = await this.bus.request(
            UnderstandingSubjects.pdfPageImage,
            { kbid, rid: ref.rid, field_id: ref.fieldId, page: key.page },
            { signal },
          );
          if (!image) return undefined;
          const rendered = { mediaType: image.content_type, data: image.b64encoded };
          this.pageCache.set(key, rendered);
          return rendered;
        },
        signal,
      );
    } catch (err) {
      if (signal?.aborted) throw err;
      if (err instanceof RenderBusy) {
        skipped.push({ key: ref.key, reason: `render capacity busy: ${err.message}` });
        this.logger.warn(
          { kbid, rid: ref.rid, field: ref.fieldId, page: ref.page, waited_ms: err.waitedMs },
          "a PDF page image was skipped: the KB's renders stayed busy",
        );
        return undefined;
      }
      this.logger.warn(
        { kbid, rid: ref.rid, field: ref.fieldId, page: ref.page, err: (err as Error).message },
        'a PDF page image failed; sent without it',
      );
      return undefined;
    }
  }

  private async preview(key: string): Promise<PageImage | undefined> {
    // An image whose processing stored no preview (not processed yet, or failed) adds nothing.
    const data = await blobAtMost(this.blobs, key, MAX_PREVIEW_BYTES);
    if (!data) return undefined;
    const mediaType = sniff(data);
    if (!mediaType) {
      this.logger.warn({ key }, 'a stored preview is not a PNG or JPEG image; not sent');
      return undefined;
    }
    return { mediaType, data: data.toString('base64') };
  }
}

/** Stored previews are JPEG (images) or PNG (PDFs): the bytes say which, whatever the metadata claims. */
function sniff(data: Buffer): string | undefined {
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 4).toString('latin1') === '\x89PNG') return 'image/png';
  return undefined;
}
