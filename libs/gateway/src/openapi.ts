import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { OpenAPIObject } from '@nestjs/swagger';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger } from '@kb/platform/messaging';
import { StorageModule, createBlobStore } from '@kb/platform/storage';
import { buildOpenApiDocument } from './gateway.app';
import { GatewayModule } from './gateway.module';

@Module({})
class OpenApiHostModule {}

/**
 * The OpenAPI document of the gateway, built from the controllers alone (no database, no real
 * bus). The committed `openapi.json` is this document; a test fails when the two differ.
 */
export async function generateOpenApiDocument(): Promise<OpenAPIObject> {
  const bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
  const root = mkdtempSync(join(tmpdir(), 'kb-openapi-'));
  const blobs = await createBlobStore({ driver: 'fs', root, signingSecret: 'openapi-'.repeat(4), publicBaseUrl: 'http://localhost' });
  const moduleRef = await Test.createTestingModule({
    imports: [
      {
        module: OpenApiHostModule,
        imports: [MessagingModule.forRoot(bus), StorageModule.forRoot(blobs), GatewayModule.forRoot({ accessCacheTtlSeconds: 0 })],
      },
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Stable serialisation, so the committed file only changes when the API does. */
export function serializeOpenApi(doc: OpenAPIObject): string {
  return JSON.stringify(doc, null, 2) + '\n';
}
