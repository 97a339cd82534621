import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageModule, createBlobStore } from '@kb/platform/storage';
import { InProcessMessageBus, MemoryQueueStore, MessagingModule, silentLogger } from '@kb/platform/messaging';
import { ObservabilityModule, createLogger } from '@kb/platform/observability';
import { GatewayModule } from '../gateway.module';
import { ACCESS_TABLE } from './access-table';

@Module({})
class Host {}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Every route the gateway registers, as `METHOD /path` keys of the access table. */
async function registeredRoutes(): Promise<string[]> {
  const bus = new InProcessMessageBus({ store: new MemoryQueueStore(), logger: silentLogger });
  const logger = createLogger({ service: 'test', level: 'silent' });
  const blobs = await createBlobStore({
    driver: 'fs',
    root: mkdtempSync(join(tmpdir(), 'kb-routes-')),
    signingSecret: 'x'.repeat(32),
    publicBaseUrl: 'http://localhost',
  });
  const moduleRef = await Test.createTestingModule({
    imports: [
      {
        module: Host,
        imports: [
          ObservabilityModule.forRoot({ service: 'test', logger, checks: [] }),
          MessagingModule.forRoot(bus),
          StorageModule.forRoot(blobs),
          GatewayModule.forRoot({ accessCacheTtlSeconds: 0 }),
        ],
      },
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const express = app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const routes = stack.flatMap((l) =>
    l.route
      ? Object.keys(l.route.methods)
          .filter((m) => m !== '_all')
          .map((m) => `${m.toUpperCase()} ${l.route!.path}`)
      : [],
  );
  await app.close();
  return routes;
}

describe('access table', () => {
  let routes: string[];
  beforeAll(async () => {
    routes = await registeredRoutes();
  });

  it('covers every registered route (a route without a rule would be refused)', () => {
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.filter((r) => !(r in ACCESS_TABLE))).toEqual([]);
  });

  it('names no route that does not exist', () => {
    expect(Object.keys(ACCESS_TABLE).filter((k) => !routes.includes(k))).toEqual([]);
  });

  it('requires a credential on every route except health, metrics and signing in (password or SAML), the e-mail verification link and signed file links', () => {
    const open = Object.entries(ACCESS_TABLE)
      .filter(([, rule]) => rule.scope === 'public')
      .map(([k]) => k);
    const tusInfo = [
      ...['', 'resource/:rid/file/:field_id/', 'slug/:rslug/file/:field_id/'].flatMap((b) => [
        `OPTIONS /api/v1/kb/:kbid/${b}tusupload`,
        `OPTIONS /api/v1/kb/:kbid/${b}tusupload/:upload_id`,
      ]),
      'OPTIONS /api/v1/processing/tusupload',
      'OPTIONS /api/v1/processing/tusupload/:upload_id',
    ];
    expect(open.sort()).toEqual(
      [
        'GET /api/v1/learning/configuration/schema',
        'GET /api/v1/nua/schema',
        'GET /api/v1/schema',
        'GET /auth',
        'GET /auth/invite',
        'GET /auth/verify-email',
        'GET /health/live',
        'GET /health/ready',
        'GET /metrics',
        'POST /api/v1/auth/login',
        'POST /api/v1/auth/signup',
        'POST /auth',
        'POST /auth/invite/login',
        'POST /auth/invite/signup',
        'POST /auth/login',
        'POST /auth/signup',
        'POST /auth/signup-form',
        'GET /api/v1/saml/:account_id/login',
        'GET /api/v1/saml/:account_id/metadata',
        'POST /api/v1/saml/:account_id/acs',
        ...tusInfo,
        'GET /api/v1/blobs/*key',
      ].sort(),
    );
  });
});
