import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRY_POINTS, ROOT, envReads, envReadsIn, type EntryPoint } from './env-scan';

/**
 * docs/operations.md, "Every setting", is the one list of the variables the apps read. The code of
 * every entry point is scanned (env-scan.ts); the table and the code must name the same variables,
 * and an app the table says reads a variable must be able to.
 */
const DOCS = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
const ENTRIES = Object.keys(ENTRY_POINTS) as EntryPoint[];
const SERVICES: EntryPoint[] = ['gateway', 'accounts', 'content', 'understanding', 'reporting'];

interface Row {
  variables: string[];
  readBy: EntryPoint[];
  defaultValue: string;
}

function settingsTable(markdown: string): Row[] {
  const section = /^## Every setting\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1];
  if (!section) throw new Error('docs/operations.md has no "## Every setting" section');
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((line) => {
      const [variables = '', readBy = '', defaultValue = ''] = line.split(' | ').map((c) => c.replace(/^\| /, ''));
      const apps = new Set<EntryPoint>();
      for (const word of readBy.split(/[^a-z-]+/)) {
        if (word === 'services') SERVICES.forEach((s) => apps.add(s));
        else if ((ENTRIES as string[]).includes(word)) apps.add(word as EntryPoint);
      }
      return {
        variables: [...variables.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string),
        readBy: [...apps],
        defaultValue: defaultValue.trim(),
      };
    });
}

describe('docs/operations.md, "Every setting"', () => {
  const rows = settingsTable(DOCS);
  const reads = new Map(ENTRIES.map((e) => [e, envReads(e)]));
  const inCode = new Set([...reads.values()].flatMap((r) => [...r.keys()]));
  const inDocs = new Set(rows.flatMap((r) => r.variables));

  test('lists every variable the code reads, and only those', () => {
    expect({
      undocumented: [...inCode].filter((v) => !inDocs.has(v)).sort(),
      unread: [...inDocs].filter((v) => !inCode.has(v)).sort(),
    }).toEqual({ undocumented: [], unread: [] });
    expect(inCode.size).toBeGreaterThan(50);
  });

  test('each variable has one row, with a default and the apps that read it', () => {
    const all = rows.flatMap((r) => r.variables);
    expect(all.filter((v, i) => all.indexOf(v) !== i)).toEqual([]);
    for (const row of rows) {
      expect(row.defaultValue).not.toBe('');
      expect(row.readBy.length).toBeGreaterThan(0);
      for (const app of row.readBy) {
        const readable = row.variables.some((v) => reads.get(app)?.has(v));
        if (!readable) throw new Error(`${row.variables.join(', ')}: ${app} reads none of them`);
      }
    }
  });

  test('the scanner finds each way this code base reads a variable', () => {
    const source = [
      "const a = reader.int('A_INT', 5, { min: 1 });",
      "const b = reader.string('B_REQUIRED');",
      "const c = reader.url('C_URL', 'http://x');",
      "const d = env['D_INDEXED'] ?? 1;",
      'const e = env.E_DOTTED?.trim();',
      "const f = process.env['F_PROCESS'];",
      "const g = await serviceDataSource(env, runtime, 'read-model', [], []);",
    ].join('\n');
    const found = envReadsIn(source, 'x.ts')
      .map((r) => `${r.name}${r.required ? '!' : ''}`)
      .sort();
    expect(found).toEqual(['A_INT', 'B_REQUIRED!', 'C_URL', 'D_INDEXED', 'E_DOTTED', 'F_PROCESS', 'READ_MODEL_DATABASE_URL']);
    // The database URL fallback is found where it is written.
    const urls = readFileSync(join(ROOT, 'libs/platform/database/src/config/database-url.config.ts'), 'utf8');
    expect(envReadsIn(urls, 'database-url.config.ts').map((r) => r.name)).toContain('DATABASE_URL');
  });
});
