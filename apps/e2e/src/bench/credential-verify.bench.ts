import autocannon from 'autocannon';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ExecutionContext } from '@nestjs/common';
import { AccessClient, AuthGuard } from '@kb/gateway';
import type { AccessGrant, CheckAccessRequest } from '@kb/contracts';
import type { MessageBus } from '@kb/platform/messaging';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startStandalone } from '../support/topologies';

/**
 * What credential verification adds to a request. (1) In process: the gateway's guard deciding a
 * request whose credential is cached (header parsing, cache lookup by hash, role check).
 * (2) Over HTTP on the standalone: p50 of the same authenticated GET with the cache on and off.
 * `npm run bench -- credential-verify`
 */
// The edge refuses ids that are not UUIDs before any credential is looked at.
const KB = '00000000-0000-4000-8000-000000000001';
const RID = '00000000-0000-4000-8000-000000000002';

async function guardMicro(iterations: number): Promise<{ p50_us: number; p99_us: number }> {
  const grant: AccessGrant = {
    principal: { id: 'sa', kind: 'api_key', credential_id: 'k', kb_id: KB, key_role: 'SMEMBER' },
    kb_role: 'SMEMBER',
    kb_found: true,
  };
  const bus = { request: async (_d: unknown, _r: CheckAccessRequest) => grant, subscribe: async () => undefined } as unknown as MessageBus;
  const client = new AccessClient(bus, { ttlSeconds: 3600, maxEntries: 1000 });
  const guard = new AuthGuard(client);
  const token = 'kbk_' + 'a'.repeat(32) + '_' + 'b'.repeat(43);
  const req = {
    method: 'GET',
    route: { path: '/api/v1/kb/:kbid/resource/:rid' },
    path: '/x',
    params: { kbid: KB, rid: RID },
    headers: { 'x-svc-serviceaccount': `Bearer ${token}` },
  };
  const ctx = { switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await guard.canActivate(ctx);
    samples.push((performance.now() - t) * 1000);
  }
  samples.sort((a, b) => a - b);
  return {
    p50_us: Math.round((samples[Math.floor(iterations / 2)] ?? 0) * 10) / 10,
    p99_us: Math.round((samples[Math.floor(iterations * 0.99)] ?? 0) * 10) / 10,
  };
}

async function httpP50(ttlSeconds: string): Promise<{ cache: string; p50_ms: number; p99_ms: number; requests_per_s: number }> {
  const topology = await startStandalone({ ACCESS_CACHE_TTL_SECONDS: ttlSeconds });
  try {
    const boot = topology.bootstrap();
    const cred = apiKey(boot.api_key.token);
    if (!cred) throw new Error('no credential');
    const created = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${boot.kb.id}/resources`, {
      credential: cred,
      body: { title: 'bench' },
    });
    const url = `${topology.http.baseUrl}/api/v1/kb/${boot.kb.id}/resource/${created.body.uuid}`;
    const headers = { [cred.header]: cred.value };
    await autocannon({ url, headers, connections: 1, duration: 3 });
    const r = await autocannon({ url, headers, connections: 1, duration: 10 });
    return {
      cache: ttlSeconds === '0' ? 'off' : `${ttlSeconds} s`,
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      requests_per_s: Math.round(r.requests.average),
    };
  } finally {
    await topology.stop();
  }
}

async function main(): Promise<void> {
  const micro = await guardMicro(200_000);
  const http = [await httpP50('5'), await httpP50('0')];
  console.log('guard with a cached credential (in process):', micro);
  console.table(http);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'credential-verify.json'), JSON.stringify({ date: new Date().toISOString(), micro, http }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
