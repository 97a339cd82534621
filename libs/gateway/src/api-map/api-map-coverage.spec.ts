import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACCESS_TABLE } from '../auth/access-table';
import { apiMapOperations, routeOperation, routeServes } from './api-map-operations';

const REPO = join(__dirname, '..', '..', '..', '..');
/** The reference map, beside the checkout (`../shared/reference/API-MAP.md`). */
const API_MAP = join(REPO, '..', 'shared', 'reference', 'API-MAP.md');
const OPERATIONS = join(__dirname, 'api-map-operations.txt');
const UNROUTED = join(REPO, 'docs', 'unrouted.md');

const normalise = (op: string) => op.replace(/\{[^}]*\}/g, '{}');
const committedOperations = () =>
  readFileSync(OPERATIONS, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

/** The rows of docs/unrouted.md: operation (as the map's form, `{}` parameters) → reason. */
function unroutedList(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(UNROUTED, 'utf8').split('\n')) {
    const m = /^\|\s*`([A-Z]+ \S+)`\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (m) rows.set(normalise(m[1] as string), m[2] as string);
  }
  return rows;
}

describe('operations of the reference API map', () => {
  // The access table is the gateway's router: access-table.spec.ts checks both hold the same routes.
  const routes = Object.keys(ACCESS_TABLE).map(routeOperation);
  const routed = (op: string) => routes.some((r) => routeServes(r, op));

  // Skipped (not passed) where the map is not checked out beside the repository.
  (existsSync(API_MAP) ? it : it.skip)("the committed list of operations is the map's (on a change, the diff shows the new list)", () => {
    const parsed = apiMapOperations(readFileSync(API_MAP, 'utf8'));
    expect(parsed.length).toBeGreaterThan(150);
    expect(committedOperations()).toEqual(parsed);
  });

  it('every operation is routed or listed in docs/unrouted.md', () => {
    const listed = unroutedList();
    const missing = committedOperations().filter((op) => !routed(op) && !listed.has(op));
    expect(missing.map((op) => `${op}: route it, or add a row to docs/unrouted.md saying why not`)).toEqual([]);
  });

  it('no listed operation is routed, and every row names an operation of the map with a reason', () => {
    const ops = new Set(committedOperations());
    const rows = [...unroutedList()];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter(([op]) => routed(op)).map(([op]) => `${op} is routed now: delete its row from docs/unrouted.md`)).toEqual([]);
    expect(rows.filter(([op]) => !ops.has(op)).map(([op]) => `${op} is not an operation of the map`)).toEqual([]);
    expect(rows.filter(([, reason]) => reason.length < 10).map(([op]) => `${op} has no reason`)).toEqual([]);
  });
});

describe('reading the map', () => {
  it.each([
    ['full paths, hosts and query strings', '| x | `GET {Z}/api/v1/kb/{kbid}/find?query=` |', ['GET /api/v1/kb/{}/find']],
    [
      'several methods, escaped pipes',
      '`GET\\|HEAD /api/v1/kb/{kbid}/resource/{rid}`',
      ['GET /api/v1/kb/{}/resource/{}', 'HEAD /api/v1/kb/{}/resource/{}'],
    ],
    [
      'root and KB-relative paths',
      '`GET /zones`, `POST /resources`, `GET /predict/tokens`',
      ['GET /api/v1/predict/tokens', 'GET /api/v1/zones', 'POST /api/v1/kb/{}/resources'],
    ],
    [
      '"same" repeats the path',
      '`GET|POST /labelset/{id}`, `DELETE` same',
      ['DELETE /api/v1/kb/{}/labelset/{}', 'GET /api/v1/kb/{}/labelset/{}', 'POST /api/v1/kb/{}/labelset/{}'],
    ],
    [
      '"..." continues the line\'s path',
      '`GET {Z}/api/v1/account/{a}/backups`, `POST .../backup/{b}/restore`',
      ['GET /api/v1/account/{}/backups', 'POST /api/v1/account/{}/backup/{}/restore'],
    ],
    [
      '"..." at the start of a line',
      '`POST {Z}/.../kb/{kb_id}/keys`; `PATCH .../tusupload/{u}`',
      ['PATCH /api/v1/kb/{}/tusupload/{}', 'POST /api/v1/account/{}/kb/{}/keys'],
    ],
    [
      'alternatives and optional tails',
      '`POST /kb/{kbid}/task/{id}/stop|start`, `GET /kb/{k}/s/{id}[/a|/b]`',
      [
        'GET /api/v1/kb/{}/s/{}',
        'GET /api/v1/kb/{}/s/{}/a',
        'GET /api/v1/kb/{}/s/{}/b',
        'POST /api/v1/kb/{}/task/{}/start',
        'POST /api/v1/kb/{}/task/{}/stop',
      ],
    ],
    ['a code span broken over two lines', 'the counters `{a,\nb}`; hidden `POST /retrieve`', ['POST /api/v1/kb/{}/retrieve']],
  ])('%s', (_name, text, expected) => {
    expect(apiMapOperations(`## 1. Operations\n${text}\n## 4. Other\n\`GET /not/counted\``)).toEqual(expected);
  });

  it('counts sections 1 to 3 only', () => {
    expect(apiMapOperations('## 0. Sources\n`GET /a`\n## 3. More\n### 3.1 x\n`GET /b`\n## 4. No\n`GET /c`')).toEqual([
      'GET /api/v1/kb/{}/b',
    ]);
  });

  it.each([
    ['GET /api/v1/kb/{}/resource/{}/{}/{}', 'GET /api/v1/kb/{}/resource/{}/text/{}', true],
    ['GET /api/v1/kb/{}/resource/{}/text/{}', 'GET /api/v1/kb/{}/resource/{}/{}/{}', false],
    ['GET /api/v1/kb/{}/a/{*}', 'GET /api/v1/kb/{}/a/b/c', true],
    ['POST /api/v1/kb/{}/a', 'GET /api/v1/kb/{}/a', false],
    ['GET /api/v1/kb/{}/a', 'GET /api/v1/kb/{}/a/b', false],
  ])('route %s serves %s: %s', (route, op, expected) => {
    expect(routeServes(route, op)).toBe(expected);
  });
});
