import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { BlobStore } from './blob-store';

/** Injection token for the application's one BlobStore. */
export const BLOB_STORE = Symbol('BLOB_STORE');

/**
 * Hands an already-built store to Nest (`main.ts` builds it with `createBlobStore`, so root
 * modules never read configuration) and closes it when the application shuts down.
 */
@Module({})
export class StorageModule implements OnApplicationShutdown {
  constructor(@Inject(BLOB_STORE) private readonly store: BlobStore) {}

  static forRoot(store: BlobStore, options: { global?: boolean } = {}): DynamicModule {
    return {
      module: StorageModule,
      global: options.global ?? true,
      providers: [{ provide: BLOB_STORE, useValue: store }],
      exports: [BLOB_STORE],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/** Adapter for the readiness endpoint's list of checks. */
export function blobStoreHealthCheck(store: BlobStore): { name: string; check(): Promise<boolean> } {
  return { name: 'blob-store', check: () => store.isHealthy() };
}
