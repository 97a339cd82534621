import { Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { BlobStore } from './blob-store';
import { BLOB_STORE, blobStoreHealthCheck, StorageModule } from './storage.module';

@Injectable()
class UsesStore {
  constructor(@Inject(BLOB_STORE) readonly store: BlobStore) {}
}

function fakeStore(): BlobStore & { close: jest.Mock; isHealthy: jest.Mock } {
  const unused = (): never => {
    throw new Error('not used here');
  };
  return {
    driver: 'fs',
    put: unused,
    get: unused,
    stat: unused,
    exists: unused,
    delete: unused,
    deletePrefix: unused,
    verifyPresignedGet: unused,
    list: unused,
    copy: unused,
    presignGet: unused,
    isHealthy: jest.fn().mockResolvedValue(true),
    close: jest.fn().mockResolvedValue(undefined),
  };
}

describe('StorageModule', () => {
  it('provides the store globally and closes it on shutdown', async () => {
    const store = fakeStore();
    const moduleRef = await Test.createTestingModule({ imports: [StorageModule.forRoot(store)], providers: [UsesStore] }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();
    expect(app.get(UsesStore).store).toBe(store);
    expect(store.close).not.toHaveBeenCalled();
    await app.close();
    expect(store.close).toHaveBeenCalledTimes(1);
  });

  it('adapts the store to a readiness check', async () => {
    const store = fakeStore();
    const check = blobStoreHealthCheck(store);
    expect(check.name).toBe('blob-store');
    await expect(check.check()).resolves.toBe(true);
  });
});
