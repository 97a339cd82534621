import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { isPlainObject, type Loc, type MemberCheck } from '../../common/member-checks';
import type { ValidationIssue } from '../../common/errors';

/** The image types every provider that reads images accepts (OpenAI, Azure OpenAI, Anthropic). */
export const ASK_IMAGE_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export type AskImageContentType = (typeof ASK_IMAGE_CONTENT_TYPES)[number];

/**
 * Bounds of the images of one /ask request. The body of /ask is read with the gateway's default
 * JSON limit (1 MiB, 413 beyond) and travels on the bus as one message (NATS: 1 MiB by default), so
 * the images a caller sends are bounded in decoded bytes well below it (base64 adds a third). The
 * images the service adds itself (rag_images_strategies) are its stored previews, bounded in count.
 */
export const ASK_IMAGE_LIMITS = {
  /** extra_context_images items. */
  maxExtraImages: 4,
  /** Decoded bytes of one image sent by the caller. */
  maxImageBytes: 512 * 1024,
  /** Decoded bytes of extra_context_images and query_image together. */
  maxTotalBytes: 640 * 1024,
  /** page_image `count` when the request names none (the reference's default). */
  defaultPageImages: 5,
  /** Largest page_image `count`. */
  maxPageImages: 10,
  /** Images rag_images_strategies may add to one answer, all strategies together. */
  maxStrategyImages: 10,
  /** Images the conversation strategy's attachments_images adds to one answer (each ≤ maxImageBytes, ≤ maxTotalBytes together). */
  maxAttachmentImages: 4,
} as const;

export const RAG_IMAGES_STRATEGY_NAMES = ['page_image', 'tables', 'paragraph_image'] as const;
export type RagImagesStrategyName = (typeof RAG_IMAGES_STRATEGY_NAMES)[number];
export type RagImagesStrategyRequest = { name: 'page_image'; count?: number | null } | { name: 'tables' } | { name: 'paragraph_image' };

/** An image given to the generative model: its type and its bytes in base64 (API-MAP 2.4 `Image`). */
export class AskImage {
  @ApiProperty({ enum: ASK_IMAGE_CONTENT_TYPES }) content_type!: AskImageContentType;
  @ApiProperty({
    type: 'string',
    format: 'byte',
    description: `The image's bytes in base64 (no data: prefix), at most ${ASK_IMAGE_LIMITS.maxImageBytes} bytes decoded.`,
  })
  b64encoded!: string;
}

export class PageImageStrategy {
  @ApiProperty({ enum: ['page_image'] }) name!: 'page_image';
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: ASK_IMAGE_LIMITS.maxPageImages,
    nullable: true,
    default: ASK_IMAGE_LIMITS.defaultPageImages,
    description: 'Pages of the best paragraphs whose image is sent (PDF pages).',
  })
  count?: number | null;
}
export class TableImageStrategy {
  @ApiProperty({ enum: ['tables'] }) name!: 'tables';
}
export class ParagraphImageStrategy {
  @ApiProperty({ enum: ['paragraph_image'] }) name!: 'paragraph_image';
}

@ApiExtraModels(PageImageStrategy, TableImageStrategy, ParagraphImageStrategy)
export class RagImagesStrategiesModels {}

export const RAG_IMAGES_STRATEGIES_PROPERTY: ApiPropertyOptions = {
  type: 'array',
  items: {
    oneOf: [PageImageStrategy, TableImageStrategy, ParagraphImageStrategy].map((c) => ({ $ref: getSchemaPath(c) })),
    discriminator: { propertyName: 'name' },
  },
  description:
    'Images added to the context (generative providers that read images only): page_image (the PDF pages of the best paragraphs), paragraph_image (the image files whose text was found), tables (pages of table paragraphs).',
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes a base64 text decodes to. */
export function decodedLength(b64: string): number {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return (b64.length / 4) * 3 - padding;
}

/** The accepted type the bytes are, if any (stored images are judged by their bytes, not their label). */
export function sniffAskImageType(head: Buffer): AskImageContentType | undefined {
  return ASK_IMAGE_CONTENT_TYPES.find((type) => matchesType(head, type));
}

/** The first bytes of each accepted type: a PNG labelled image/jpeg is refused here, not by the provider. */
function matchesType(head: Buffer, type: AskImageContentType): boolean {
  switch (type) {
    case 'image/png':
      return head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    case 'image/jpeg':
      return head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
    case 'image/gif':
      return head.subarray(0, 4).toString('latin1') === 'GIF8';
    case 'image/webp':
      return head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP';
  }
}

/** Checks one image; returns its decoded size (0 when refused). */
function imageIssues(v: unknown, loc: Loc, issues: ValidationIssue[]): number {
  if (!isPlainObject(v)) return (void issues.push({ loc, msg: 'Input should be {content_type, b64encoded}', type: 'model_type' }), 0);
  for (const key of Object.keys(v))
    if (key !== 'content_type' && key !== 'b64encoded')
      issues.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  const type = v['content_type'];
  const data = v['b64encoded'];
  let ok = true;
  if (typeof type !== 'string' || !(ASK_IMAGE_CONTENT_TYPES as readonly string[]).includes(type)) {
    issues.push({
      loc: [...loc, 'content_type'],
      msg: `Input should be ${ASK_IMAGE_CONTENT_TYPES.map((t) => `'${t}'`).join(', ')}`,
      type: 'enum',
    });
    ok = false;
  }
  if (typeof data !== 'string') {
    issues.push({ loc: [...loc, 'b64encoded'], msg: 'Input should be a valid string', type: 'string_type' });
    return 0;
  }
  // Measured before the pattern test: a long string is refused without scanning it.
  if (data.length > Math.ceil(ASK_IMAGE_LIMITS.maxImageBytes / 3) * 4) {
    issues.push({
      loc: [...loc, 'b64encoded'],
      msg: `The image should have at most ${ASK_IMAGE_LIMITS.maxImageBytes} bytes`,
      type: 'too_long',
    });
    return 0;
  }
  if (data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) {
    issues.push({ loc: [...loc, 'b64encoded'], msg: 'Input should be base64 (without a data: prefix)', type: 'base64_decode' });
    return 0;
  }
  const size = decodedLength(data);
  if (size > ASK_IMAGE_LIMITS.maxImageBytes) {
    issues.push({
      loc: [...loc, 'b64encoded'],
      msg: `The image should have at most ${ASK_IMAGE_LIMITS.maxImageBytes} bytes`,
      type: 'too_long',
    });
    return 0;
  }
  if (ok && !matchesType(Buffer.from(data.slice(0, 16), 'base64'), type as AskImageContentType)) {
    issues.push({ loc: [...loc, 'b64encoded'], msg: `The bytes are not a ${String(type)} image`, type: 'value_error' });
    return 0;
  }
  return ok ? size : 0;
}

const given = (v: unknown) => v !== undefined && v !== null;

/** `query_image`: one image. */
export const queryImageCheck: MemberCheck = (v, loc, issues) => {
  if (given(v)) imageIssues(v, loc, issues);
};

/**
 * `extra_context_images`: at most maxExtraImages images; with `query_image` at most maxTotalBytes
 * decoded bytes (reported on this member, which carries most of them).
 */
export const extraContextImagesCheck: MemberCheck = (v, loc, issues, owner) => {
  if (!given(v)) return;
  if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  if (v.length > ASK_IMAGE_LIMITS.maxExtraImages)
    return void issues.push({ loc, msg: `List should have at most ${ASK_IMAGE_LIMITS.maxExtraImages} items`, type: 'too_long' });
  let total = 0;
  v.forEach((image, i) => (total += imageIssues(image, [...loc, i], issues)));
  const query = owner['query_image'];
  if (isPlainObject(query) && typeof query['b64encoded'] === 'string') total += decodedLength(query['b64encoded']);
  if (total > ASK_IMAGE_LIMITS.maxTotalBytes)
    issues.push({
      loc,
      msg: `The images (with query_image) should have at most ${ASK_IMAGE_LIMITS.maxTotalBytes} bytes together`,
      type: 'too_long',
    });
};

/** `rag_images_strategies`: each name at most once; page_image `count` within 1..maxPageImages. */
export const ragImagesStrategiesCheck: MemberCheck = (v, loc, issues) => {
  if (!given(v)) return;
  if (!Array.isArray(v)) return void issues.push({ loc, msg: 'Input should be a valid list', type: 'list_type' });
  const seen = new Set<string>();
  v.forEach((s, i) => {
    const at = [...loc, i];
    if (!isPlainObject(s) || typeof s['name'] !== 'string' || !(RAG_IMAGES_STRATEGY_NAMES as readonly string[]).includes(s['name']))
      return void issues.push({
        loc: [...at, 'name'],
        msg: `Input should be ${RAG_IMAGES_STRATEGY_NAMES.map((n) => `'${n}'`).join(', ')}`,
        type: 'union_tag_invalid',
      });
    if (seen.has(s['name'])) issues.push({ loc: at, msg: `rag_images_strategies may contain ${s['name']} only once`, type: 'value_error' });
    seen.add(s['name']);
    for (const key of Object.keys(s))
      if (key !== 'name' && !(key === 'count' && s['name'] === 'page_image'))
        issues.push({ loc: [...at, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    const count = s['count'];
    if (s['name'] === 'page_image' && given(count)) {
      if (typeof count !== 'number' || !Number.isInteger(count))
        issues.push({ loc: [...at, 'count'], msg: 'Input should be a valid integer', type: 'int_type' });
      else if (count < 1)
        issues.push({ loc: [...at, 'count'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' });
      else if (count > ASK_IMAGE_LIMITS.maxPageImages)
        issues.push({
          loc: [...at, 'count'],
          msg: `Input should be less than or equal to ${ASK_IMAGE_LIMITS.maxPageImages}`,
          type: 'less_than_equal',
        });
    }
  });
};

/** The strategies of a checked request, page_image's count defaulted. */
export function ragImagesStrategiesOf(raw: RagImagesStrategyRequest[] | undefined | null): {
  pageImages?: number;
  tables: boolean;
  paragraphImages: boolean;
} {
  const page = raw?.find((s) => s.name === 'page_image') as { count?: number | null } | undefined;
  return {
    ...(page ? { pageImages: page.count ?? ASK_IMAGE_LIMITS.defaultPageImages } : {}),
    tables: !!raw?.some((s) => s.name === 'tables'),
    paragraphImages: !!raw?.some((s) => s.name === 'paragraph_image'),
  };
}
