import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ACCESS_TABLE } from './auth/access-table';
import { declareErrorResponses, type Operation } from './openapi-errors';
import { ROUTE_DECLARATIONS } from './openapi-route-errors';
import { isPerRequestQuotaRoute, quotaFeaturesFor } from './quota/quota-features';

type Doc = { paths: Record<string, Record<string, Operation>> };
const committed = (): Doc => JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as Doc;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'];
const ERROR_SCHEMAS = new Set(['ErrorResponse', 'ValidationErrorResponse', 'RateLimitedResponse']);

/**
 * Each operation's missing error responses, derived from the access table independently of the
 * generator: 401 and 403 on every route that needs a credential, 404 where a KB or account is
 * named, 422 where the route takes any input, 402 where the quota guard counts the work, the
 * route's own declared statuses, and a body (one of the error schemas) for every 4xx but HEAD's.
 */
function missingErrors(doc: Doc): string[] {
  const found: string[] = [];
  const rules = new Map(
    Object.entries(ACCESS_TABLE).map(([route, rule]) => {
      const [method, path] = route.split(' ') as [string, string];
      return [`${method} ${path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}')}`, { route, rule }];
    }),
  );
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const entry = rules.get(name);
      if (!entry) {
        found.push(`${name}: no access rule`);
        continue;
      }
      const { route, rule } = entry;
      const expected = new Set(['400', '401']);
      if (rule.scope !== 'public') expected.add('403');
      if (rule.scope === 'kb' || rule.scope === 'account' || (rule.scope === 'ua-key' && rule.kbParam)) expected.add('404');
      if (op.requestBody || (op.parameters ?? []).length > 0 || path.includes('{')) expected.add('422');
      const routePath = route.split(' ')[1] as string;
      if (quotaFeaturesFor(method, routePath).length > 0 || isPerRequestQuotaRoute(method, routePath)) expected.add('402');
      for (const status of Object.keys(ROUTE_DECLARATIONS[route]?.errors ?? {})) expected.add(status);
      for (const status of expected) if (!op.responses[status]) found.push(`${name}: no ${status}`);
      for (const [status, response] of Object.entries(op.responses)) {
        if (!status.startsWith('4') || method === 'head' || status === '416') continue;
        const schema = response.content?.['application/json']?.schema as { $ref?: string } | undefined;
        if (!ERROR_SCHEMAS.has(schema?.$ref?.replace('#/components/schemas/', '') ?? ''))
          found.push(`${name}: ${status} without an error body`);
      }
    }
  }
  return found;
}

describe('openapi.json, error responses', () => {
  it('declares the error responses of every operation, each with its body', () => {
    expect(missingErrors(committed())).toEqual([]);
  });

  it('notices a missing 401, 403, 404 or 422 and an error without its body (the check can fail)', () => {
    const doc = committed();
    const find = doc.paths['/api/v1/kb/{kbid}/find']?.['post'] as Operation;
    delete find.responses['401'];
    delete find.responses['403'];
    delete find.responses['422'];
    const user = doc.paths['/api/v1/kb/{kbid}/resource/{rid}']?.['get'] as Operation;
    delete user.responses['404'];
    delete (user.responses['403'] as { content?: unknown }).content;
    expect(missingErrors(doc).sort()).toEqual([
      'GET /api/v1/kb/{kbid}/resource/{rid}: 403 without an error body',
      'GET /api/v1/kb/{kbid}/resource/{rid}: no 404',
      'POST /api/v1/kb/{kbid}/find: no 401',
      'POST /api/v1/kb/{kbid}/find: no 403',
      'POST /api/v1/kb/{kbid}/find: no 422',
    ]);
  });

  it('names only routes of the access table in its per-route declarations', () => {
    expect(Object.keys(ROUTE_DECLARATIONS).filter((route) => !(route in ACCESS_TABLE))).toEqual([]);
  });

  it('derives the statuses from the access rule, the inputs and the route declarations', () => {
    const doc = {
      paths: {
        '/api/v1/kb/{kbid}/upload': { post: { responses: { '201': { description: 'uploaded' } } } },
        '/api/v1/auth/login': {
          post: { requestBody: { content: { 'application/json': { schema: {} } } }, responses: { '200': { description: 'ok' } } },
        },
        '/api/v1/user': { get: { responses: { '200': { description: 'ok' } } } },
        '/api/v1/predict/{endpoint}/{kbid}': { get: { responses: { '200': { description: 'ok' } } } },
      },
    } as unknown as OpenAPIObject;
    const out = declareErrorResponses(doc).paths as Record<string, Record<string, Operation>>;
    const statuses = (path: string, method: string) => Object.keys(out[path]?.[method]?.responses ?? {});
    expect(statuses('/api/v1/kb/{kbid}/upload', 'post')).toEqual(['201', '400', '401', '402', '403', '404', '409', '413', '415', '422']);
    expect(statuses('/api/v1/auth/login', 'post')).toEqual(['200', '400', '401', '413', '415', '422', '429']);
    expect(statuses('/api/v1/user', 'get')).toEqual(['200', '400', '401', '403']);
    // An understanding-API key's route naming a KB: 404 outside its account, 402 past the self-hosted limits.
    expect(statuses('/api/v1/predict/{endpoint}/{kbid}', 'get')).toEqual(['200', '400', '401', '402', '403', '404', '422']);
    expect(out['/api/v1/auth/login']?.['post']?.security).toEqual([]);
    expect(out['/api/v1/user']?.['get']?.security).toEqual([{ bearer: [] }]);
    expect(out['/api/v1/auth/login']?.['post']?.responses['429']?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/RateLimitedResponse' } },
    });
  });

  it('refuses an operation the access table does not know (fail closed)', () => {
    const doc = { paths: { '/api/v1/nowhere': { get: { responses: { '200': { description: 'ok' } } } } } } as unknown as OpenAPIObject;
    expect(() => declareErrorResponses(doc)).toThrow('no access rule for GET /api/v1/nowhere');
  });
});
