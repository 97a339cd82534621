import sharp from 'sharp';
import { addBlankLineParagraphs, DocumentBuilder } from './document-builder';
import { ExtractionError } from './extraction.error';
import type { ExtractedDocument, Ocr } from './extraction.types';

const THUMBNAIL_SIZE = 512;
/** Images above this many pixels are refused before decoding (decompression bombs). */
const MAX_PIXELS = 100_000_000;

/**
 * Images: a JPEG thumbnail (≤ 512 px) and, when an Ocr port is given, their text as OCR paragraphs.
 * Every format goes to OCR as PNG (first frame/page only), normalised for orientation and size,
 * because tesseract's own decoders miss WebP and multi-page TIFF.
 */
export async function extractImage(data: Buffer, ocr?: Ocr): Promise<ExtractedDocument> {
  let width: number;
  let height: number;
  try {
    const meta = await sharp(data, { limitInputPixels: MAX_PIXELS }).metadata();
    width = meta.width ?? 0;
    height = meta.height ?? 0;
  } catch (err) {
    throw new ExtractionError(`Image could not be read: ${(err as Error).message}`, 'CORRUPT_FILE');
  }
  let thumbnail: Buffer;
  let forOcr: Buffer | undefined;
  try {
    thumbnail = await sharp(data, { limitInputPixels: MAX_PIXELS })
      .rotate()
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 80 })
      .toBuffer();
    // Small images OCR badly; tesseract wants text ~20 px high, so tiny images are upscaled.
    const upscale = Math.max(width, height) < 1000 ? 2 : 1;
    if (ocr) forOcr = await sharp(data, { limitInputPixels: MAX_PIXELS }).rotate().resize({ width: width * upscale }).flatten({ background: '#ffffff' }).png().toBuffer();
  } catch (err) {
    throw new ExtractionError(`Image could not be decoded: ${(err as Error).message}`, 'CORRUPT_FILE');
  }
  const builder = new DocumentBuilder();
  const metadata: Record<string, string> = { width: String(width), height: String(height) };
  if (ocr && forOcr) {
    try {
      const { text, confidence } = await ocr.recognize(forOcr);
      addBlankLineParagraphs(builder, text, 'OCR');
      metadata['ocr_confidence'] = String(Math.round(confidence));
    } catch (err) {
      throw new ExtractionError(`OCR failed: ${(err as Error).message}`, 'OCR_FAILED');
    }
  }
  return builder.build({ metadata, thumbnail: { data: thumbnail, content_type: 'image/jpeg' } });
}
