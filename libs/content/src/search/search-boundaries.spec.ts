import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every .ts file under `dir` (specs included: they must keep to the boundary too). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The relative imports of a file, as paths from the content lib's src folder. */
function importsOf(file: string, src: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => relative(src, resolve(dirname(file), m[1] as string)));
}

describe('search module boundaries', () => {
  const src = resolve(__dirname, '..');

  it('search reads resources only through its port: nothing under search/ imports resources/', () => {
    const crossing = filesUnder(join(src, 'search')).flatMap((f) =>
      importsOf(f, src)
        .filter((p) => p === 'resources' || p.startsWith('resources/'))
        .map((p) => `${relative(src, f)} -> ${p}`),
    );
    expect(crossing).toEqual([]);
  });

  it('the check sees imports: resources/ does import search/ (the indexer)', () => {
    const toSearch = filesUnder(join(src, 'resources')).flatMap((f) => importsOf(f, src).filter((p) => p.startsWith('search/')));
    expect(toSearch.length).toBeGreaterThan(0);
  });
});
