import type { Ocr } from './extraction.types';

interface TesseractWorker {
  recognize(image: Buffer): Promise<{ data: { text: string; confidence: number } }>;
  terminate(): Promise<unknown>;
}

export interface TesseractOcrOptions {
  /** Tesseract language codes joined with '+'; only languages with an installed data package work offline. */
  languages?: string;
  /** Folder holding `<lang>.traineddata.gz`; defaults to the @tesseract.js-data/eng package. */
  langPath?: string;
}

/**
 * OCR with tesseract.js, fully offline: the English model comes from @tesseract.js-data/eng and
 * nothing is cached or downloaded. One worker, created on first use (starting it costs ~0.3 s and
 * ~100 MB), shared by all calls — tesseract.js queues jobs on it — and closed by `close()`, which
 * processes and tests must call so Node can exit.
 */
export function createTesseractOcr(options: TesseractOcrOptions = {}): Ocr {
  let worker: Promise<TesseractWorker> | null = null;
  const start = async (): Promise<TesseractWorker> => {
    // Loaded on first use so importing the extractors costs nothing when OCR is never needed.
    const { createWorker } = await import('tesseract.js');
    // The data package ships no type declarations; it exports { code, gzip, langPath }.
    const langPath = options.langPath ?? (require('@tesseract.js-data/eng') as { langPath: string }).langPath;
    return createWorker(options.languages ?? 'eng', 1, { langPath, gzip: true, cacheMethod: 'none' });
  };
  return {
    async recognize(image: Buffer) {
      worker ??= start();
      const w = await worker.catch((err: unknown) => {
        worker = null;
        throw err;
      });
      const { data } = await w.recognize(image);
      return { text: data.text, confidence: data.confidence };
    },
    async close() {
      const pending = worker;
      worker = null;
      if (pending) await (await pending.catch(() => null))?.terminate();
    },
  };
}
