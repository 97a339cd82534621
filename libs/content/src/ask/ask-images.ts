import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ASK_IMAGE_LIMITS, fieldBlobPrefix, ragImagesStrategiesOf, type AskRequest } from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { Issues } from '../search/query/issues';
import type { GenerationImage, Generator } from './generation';

/** A context paragraph as far as images are concerned: its key, resource and field (`f/<id>`). */
export interface ImageContextItem {
  key: string;
  rid: string;
  field?: string;
}

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
  ) {}

  /**
   * Refuses what the generator cannot do: images the caller sent need a provider that reads them
   * (the built-in extractive model cannot). page_image needs rendered PDF pages, which are not
   * available (see docs/ask.md). Strategies alone never refuse: without a provider they add nothing.
   */
  check(body: AskRequest, generator: Generator | undefined, issues: Issues): void {
    const sent = (body.extra_context_images?.length ?? 0) > 0 || !!body.query_image;
    if (sent && generator && !generator.images) {
      const member = body.extra_context_images?.length ? 'extra_context_images' : 'query_image';
      issues.issue(
        member,
        'Not supported by the built-in extractive model: images need a generative provider that reads them (generative_model with user_keys)',
        'not_supported',
      );
    }
    body.rag_images_strategies?.forEach((s, i) => {
      if (s.name === 'page_image')
        issues.issue(['rag_images_strategies', i, 'name'], 'Not supported: PDF page images are not available', 'not_supported');
    });
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
   * paragraph_image: for each context paragraph of an image file (in context order, one per field),
   * the preview processing stored for it (≤ 512 px JPEG, made in the extraction sandbox), so no
   * uploaded bytes are decoded here. At most ASK_IMAGE_LIMITS.maxStrategyImages.
   */
  async fromStrategies(kbid: string, body: AskRequest, context: ImageContextItem[], signal?: AbortSignal): Promise<GenerationImage[]> {
    const strategies = ragImagesStrategiesOf(body.rag_images_strategies);
    if (!strategies.paragraphImages) return [];
    const fields: { rid: string; fieldId: string; key: string }[] = [];
    const seen = new Set<string>();
    for (const c of context) {
      if (!c.rid || !c.field?.startsWith('f/')) continue;
      const fieldId = c.field.slice(2);
      const id = `${c.rid}/${fieldId}`;
      if (seen.has(id)) continue;
      seen.add(id);
      fields.push({ rid: c.rid, fieldId, key: c.key });
    }
    if (!fields.length) return [];
    const rows = (await this.ds.query(
      `SELECT f.rid::text AS rid, f.field_id FROM content.fields f
        WHERE f.kbid = $1 AND f.field_type = 'file' AND (f.rid::text || '/' || f.field_id) = ANY($2::text[])
          AND f.value->'file'->>'content_type' LIKE 'image/%'`,
      [kbid, fields.map((f) => `${f.rid}/${f.fieldId}`)],
    )) as { rid: string; field_id: string }[];
    const images = new Set(rows.map((r) => `${r.rid}/${r.field_id}`));
    const out: GenerationImage[] = [];
    for (const f of fields) {
      if (out.length >= ASK_IMAGE_LIMITS.maxStrategyImages) break;
      if (!images.has(`${f.rid}/${f.fieldId}`)) continue;
      signal?.throwIfAborted();
      const image = await this.preview(fieldBlobPrefix({ kbid, rid: f.rid, field_type: 'file', field_id: f.fieldId }) + 'thumbnail');
      if (image) out.push({ ...image, key: f.key });
    }
    return out;
  }

  private async preview(key: string): Promise<Omit<GenerationImage, 'key'> | undefined> {
    const stat = await this.blobs.stat(key);
    // An image whose processing stored no preview (not processed yet, or failed) adds nothing.
    if (!stat || stat.size > MAX_PREVIEW_BYTES) return undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of (await this.blobs.get(key)).body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_PREVIEW_BYTES) return undefined;
      chunks.push(chunk);
    }
    const data = Buffer.concat(chunks);
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
