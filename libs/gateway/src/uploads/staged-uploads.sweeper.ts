import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { PROCESSING_UPLOADS_PREFIX } from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { TUS_PREFIX } from './tus.service';

/** How long an unused upload token, or an abandoned resumable upload, is kept. */
export const STAGED_UPLOAD_TTL_MS = 24 * 3600 * 1000;
const EVERY_MS = 3600 * 1000;

/**
 * Deletes what clients started and never finished: understanding-API uploads no push named within
 * a day, and TUS uploads (of KBs and of the understanding API) without a chunk for a day. Runs
 * hourly in every gateway; the deletes are idempotent, so replicas may overlap.
 */
@Injectable()
export class StagedUploadsSweeper implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger(StagedUploadsSweeper.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(@Inject(BLOB_STORE) private readonly blobs: BlobStore) {}

  onModuleInit(): void {
    this.timer = setInterval(() => {
      this.sweep().then(
        (n) => n.staged + n.tus > 0 && this.log.log(`expired ${n.staged} staged upload(s) and ${n.tus} abandoned TUS upload(s)`),
        (err: unknown) => this.log.warn(`sweeping expired uploads failed: ${String(err)}`),
      );
    }, EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async sweep(now = Date.now(), ttlMs = STAGED_UPLOAD_TTL_MS): Promise<{ staged: number; tus: number }> {
    const cutoff = now - ttlMs;
    let staged = 0;
    for await (const item of this.blobs.list(PROCESSING_UPLOADS_PREFIX)) {
      if (item.lastModified.getTime() >= cutoff) continue;
      await this.blobs.delete(item.key);
      staged += 1;
    }
    // A TUS upload is a directory gateway/tus/<namespace>/<id>/ of a state and parts; its newest object tells when it was last written.
    const newest = new Map<string, number>();
    for await (const item of this.blobs.list(TUS_PREFIX)) {
      const dir = item.key.split('/').slice(0, 4).join('/') + '/';
      newest.set(dir, Math.max(newest.get(dir) ?? 0, item.lastModified.getTime()));
    }
    let tus = 0;
    for (const [dir, at] of newest) {
      if (at >= cutoff) continue;
      await this.blobs.deletePrefix(dir);
      tus += 1;
    }
    return { staged, tus };
  }
}
