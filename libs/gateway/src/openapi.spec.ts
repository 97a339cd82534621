import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ACCESS_TABLE } from './auth/access-table';
import { generateOpenApiDocument, serializeOpenApi } from './openapi';

const root = join(__dirname, '..', '..', '..');

type Schema = {
  $ref?: string;
  type?: string;
  properties?: object;
  additionalProperties?: unknown;
  allOf?: unknown;
  oneOf?: unknown;
  anyOf?: unknown;
};
type Content = Record<string, { schema?: Schema }>;
type Operation = { requestBody?: { content?: Content }; responses?: Record<string, { description?: string; content?: Content }> };
type OpenApiDocument = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Routes (`METHOD /path/:param` as in the access table) the document has no operation for. */
function undocumentedRoutes(doc: OpenApiDocument, routes: string[]): string[] {
  return routes.filter((route) => {
    const [method, path] = route.split(' ') as [string, string];
    // Nest registers OPTIONS only for the TUS protocol's server information; Swagger documents no OPTIONS.
    if (method === 'OPTIONS') return false;
    const documented = path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
    return !doc.paths[documented]?.[method.toLowerCase()];
  });
}

/** A schema that says "an object" and nothing about its members. */
function isBare(doc: OpenApiDocument, schema: Schema | undefined): boolean {
  const target = schema?.$ref ? doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] : schema;
  if (!target) return false;
  return (
    (target.type === 'object' || target.type === undefined) &&
    !target.properties &&
    !target.additionalProperties &&
    !target.allOf &&
    !target.oneOf &&
    !target.anyOf
  );
}

/** Every JSON request body and 2xx JSON response whose schema is bare, as `METHOD path body|<status>`. */
function bareBodies(doc: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const json = (content: Content | undefined) =>
        Object.entries(content ?? {})
          .filter(([type]) => /json/.test(type))
          .map(([, media]) => media.schema);
      if (json(op.requestBody?.content).some((s) => !s || isBare(doc, s))) found.push(`${method.toUpperCase()} ${path} body`);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (status.startsWith('2') && json(response.content).some((s) => !s || isBare(doc, s)))
          found.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
  }
  return found.sort();
}
const committed = () => readFileSync(join(root, 'openapi.json'), 'utf8');

describe('committed openapi.json', () => {
  it('matches what the code serves (run `npm run openapi` after an API change)', async () => {
    expect(serializeOpenApi(await generateOpenApiDocument())).toBe(committed());
  });
});

type Problem = { ruleId: string; severity: 'error' | 'warn'; message: string; pointer: string };

/** Redocly's recommended rules over a document (@redocly/openapi-core is ESM: it runs in its own node process). */
async function lint(document?: string): Promise<Problem[]> {
  const args = [join(root, 'tools', 'scripts', 'lint-openapi.mjs'), '--json', ...(document ? ['--document', document] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Problem[];
}

/**
 * Warnings of the recommended ruleset the document has, each for a reason. A new kind of warning
 * fails the spec: fix it, or add it here with its reason.
 */
const ACCEPTED_WARNINGS: Record<string, string> = {
  'info-license': 'a service, not a published library: no licence to state',
  'no-ambiguous-paths':
    "the reference system's fixed paths, e.g. /kb/{kbid}/resource/{rid}/{field_type}/{field_id} beside /kb/{kbid}/resource/{rid}/text/{field_id}",
  'operation-2xx-response': 'SAML login only redirects (302) to the identity provider',
};

describe('openapi.json, linted', () => {
  it("has no error under Redocly's recommended rules, and only the accepted kinds of warnings", async () => {
    const problems = await lint();
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(
      [...new Set(problems.filter((p) => p.severity === 'warn').map((p) => p.ruleId))].filter((rule) => !(rule in ACCEPTED_WARNINGS)),
    ).toEqual([]);
  }, 60_000);

  it('reports an error in a broken document (the check can fail)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-openapi-lint-'));
    try {
      const doc = JSON.parse(committed()) as OpenApiDocument;
      doc.paths['/api/v1/broken/{id}'] = {
        get: {
          responses: {
            '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Missing' } } } },
          },
        },
      };
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
      const rules = (await lint(join(dir, 'openapi.json'))).filter((p) => p.severity === 'error').map((p) => p.ruleId);
      expect(rules).toEqual(expect.arrayContaining(['path-parameters-defined', 'no-unresolved-refs']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * Documented bodies still bare (`{type: object}`, no members declared), as `METHOD path body|status`.
 * This list only shrinks: declare the DTO and remove its line.
 */
const BARE_BODIES: string[] = [];

/**
 * Operations (not HEAD, not answering 204 only) whose success answers declare no body, each for a
 * reason: every other operation declares what it answers, with its media type and schema.
 */
function withoutBody(doc: OpenApiDocument): string[] {
  const found: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op || method === 'head') continue;
      const success = Object.entries(op.responses ?? {}).filter(([status]) => status.startsWith('2'));
      if (success.every(([status]) => status === '204')) continue;
      if (!success.some(([, response]) => Object.keys(response.content ?? {}).length > 0)) found.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return found.sort();
}

const TUS_CREATE = 'TUS creation: 201 with the upload URL in Location, no body';
const NO_BODY: Record<string, string> = {
  'POST /api/v1/kb/{kbid}/tusupload': TUS_CREATE,
  'POST /api/v1/kb/{kbid}/resource/{rid}/file/{field_id}/tusupload': TUS_CREATE,
  'POST /api/v1/kb/{kbid}/slug/{rslug}/file/{field_id}/tusupload': TUS_CREATE,
  'POST /api/v1/processing/tusupload': TUS_CREATE,
  'POST /api/v1/kb/{kbid}/search_configurations/{config_name}': 'answers 201 with an empty body',
  'PATCH /api/v1/kb/{kbid}/search_configurations/{config_name}': 'answers 200 with an empty body',
};

/** Routes the document leaves out on purpose, each for a reason (they are not the API a client calls). */
const NOT_DOCUMENTED: Record<string, string> = {
  'GET /health/live': "the orchestrator's probe",
  'GET /health/ready': "the orchestrator's probe",
  'GET /metrics': 'Prometheus scraping',
  'GET /auth': "the HTML sign-in page (the reference's {auth_url}) and its forms",
  'POST /auth': "the HTML sign-in page's form",
  'POST /auth/signup-form': "the HTML sign-in page's form",
  'POST /auth/login': "the HTML sign-in page's form",
  'POST /auth/signup': "the HTML sign-in page's form",
  'GET /auth/invite': 'the HTML invitation page',
  'POST /auth/invite/login': "the HTML invitation page's form",
  'POST /auth/invite/signup': "the HTML invitation page's form",
  'GET /auth/verify-email': 'the link mailed to verify an address (opens a page)',
};

describe('openapi.json, complete', () => {
  const doc = () => JSON.parse(committed()) as OpenApiDocument;

  it('documents every route of the access table (which lists every route the gateway serves) but the pages and probes', () => {
    expect(undocumentedRoutes(doc(), Object.keys(ACCESS_TABLE))).toEqual(
      Object.keys(NOT_DOCUMENTED).filter((route) => route in ACCESS_TABLE),
    );
    expect(Object.keys(NOT_DOCUMENTED).filter((route) => !(route in ACCESS_TABLE))).toEqual([]);
  });

  it('declares the members of every JSON request body and 2xx JSON response', () => {
    expect(bareBodies(doc())).toEqual(BARE_BODIES);
  });

  it('declares the body of every success answer, but the few that have none (each with its reason)', () => {
    expect(withoutBody(doc())).toEqual(Object.keys(NO_BODY).sort());
  });

  it('notices a success answer without its body, and a JSON body without a schema (the checks can fail)', () => {
    const broken = doc();
    const find = broken.paths['/api/v1/kb/{kbid}/find']?.['post'] as Operation;
    find.responses = { '200': { description: 'ok' } };
    const counters = broken.paths['/api/v1/kb/{kbid}/counters']?.['get'] as Operation;
    counters.responses = { '200': { description: 'ok', content: { 'application/json': {} } } };
    expect(withoutBody(broken)).toEqual([...Object.keys(NO_BODY), 'POST /api/v1/kb/{kbid}/find'].sort());
    expect(bareBodies(broken)).toEqual(['GET /api/v1/kb/{kbid}/counters 200']);
  });

  it('notices an undocumented route and a bare body (the checks can fail)', () => {
    const broken = doc();
    broken.paths['/api/v1/kb/{kbid}/added'] = {
      post: {
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    };
    expect(bareBodies(broken)).toEqual([...BARE_BODIES, 'POST /api/v1/kb/{kbid}/added 200', 'POST /api/v1/kb/{kbid}/added body'].sort());
    expect(undocumentedRoutes(doc(), ['GET /api/v1/kb/:kbid/not-there', 'GET /api/v1/kb/:kbid'])).toEqual([
      'GET /api/v1/kb/:kbid/not-there',
    ]);
  });
});
