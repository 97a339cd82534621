import sharp from 'sharp';
import { addBlankLineParagraphs, DocumentBuilder } from './document-builder';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, Ocr } from './extraction.types';
import { extractionSandbox } from './sandbox/extraction-sandbox';

const THUMBNAIL_SIZE = 512;
/** Images above this many pixels are refused before decoding (decompression bombs). */
const MAX_PIXELS = 100_000_000;

/** What sharp makes of an image in the sandbox: its size, a thumbnail and, when asked, a PNG for OCR. */
export interface DecodedImage {
  width: number;
  height: number;
  thumbnail: Buffer;
  forOcr?: Buffer;
}

/**
 * Images: a JPEG thumbnail (≤ 512 px) and, when an Ocr port is given, their text as OCR paragraphs.
 * Decoding runs in the extraction sandbox (a worker process with heap and time limits); sharp's own memory
 * is native, outside those limits, so images above MAX_PIXELS are refused before decoding. OCR
 * runs where the Ocr port lives (tesseract keeps its own worker).
 */
export async function extractImage(data: Buffer, ocr?: Ocr): Promise<ExtractedDocument> {
  const decoded = await extractionSandbox().run<DecodedImage>({ kind: 'image', data, forOcr: !!ocr });
  const { width, height } = decoded;
  const builder = new DocumentBuilder();
  const metadata: Record<string, string> = { width: String(width), height: String(height) };
  if (ocr && decoded.forOcr) {
    try {
      const { text, confidence } = await ocr.recognize(Buffer.from(decoded.forOcr));
      addBlankLineParagraphs(builder, text, 'OCR');
      metadata['ocr_confidence'] = String(Math.round(confidence));
    } catch (err) {
      throw new ExtractionError(`OCR failed: ${(err as Error).message}`, 'OCR_FAILED');
    }
  }
  return builder.build({ metadata, thumbnail: { data: Buffer.from(decoded.thumbnail), content_type: 'image/jpeg' } });
}

/**
 * Every format goes to OCR as PNG (first frame/page only), normalised for orientation and size,
 * because tesseract's own decoders miss WebP and multi-page TIFF. Runs in the sandbox.
 */
export async function decodeImage(data: Buffer, forOcr: boolean): Promise<DecodedImage> {
  let width: number;
  let height: number;
  try {
    const meta = await sharp(data, { limitInputPixels: MAX_PIXELS }).metadata();
    width = meta.width ?? 0;
    height = meta.height ?? 0;
  } catch (err) {
    throw imageError('Image could not be read', err);
  }
  try {
    const thumbnail = await sharp(data, { limitInputPixels: MAX_PIXELS })
      .rotate()
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 80 })
      .toBuffer();
    // Small images OCR badly; tesseract wants text ~20 px high, so tiny images are upscaled.
    const upscale = Math.max(width, height) < 1000 ? 2 : 1;
    const png = forOcr
      ? await sharp(data, { limitInputPixels: MAX_PIXELS })
          .rotate()
          .resize({ width: width * upscale })
          .flatten({ background: '#ffffff' })
          .png()
          .toBuffer()
      : undefined;
    return { width, height, thumbnail, ...(png ? { forOcr: png } : {}) };
  } catch (err) {
    throw imageError('Image could not be decoded', err);
  }
}

/** sharp's pixel-limit refusal is a decompression bomb (TOO_LARGE); anything else a damaged image. */
function imageError(what: string, err: unknown): ExtractionError {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message))
    return new ExtractionError(`The image has more than ${MAX_PIXELS} pixels and was not decoded (a decompression bomb?)`, 'TOO_LARGE');
  return new ExtractionError(`${what}: ${message}`, 'CORRUPT_FILE');
}
