import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..', '..');
const committedTypes = () => readFileSync(join(__dirname, 'generated', 'openapi.ts'), 'utf8');

/** What `npm run client` would write (openapi-typescript is ESM, so it runs in its own node process). */
async function generatedTypes(document?: string): Promise<string> {
  const args = [join(root, 'tools', 'scripts', 'generate-client.mjs'), '--print', ...(document ? ['--document', document] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe('generated client types', () => {
  it('are what openapi-typescript makes of the committed openapi.json (run `npm run client` after `npm run openapi`)', async () => {
    expect(await generatedTypes()).toBe(committedTypes());
  }, 60_000);

  it('differ when the document does (the check can fail)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-client-'));
    try {
      const doc = JSON.parse(readFileSync(join(root, 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
      doc.paths['/api/v1/added-by-the-test'] = { get: { operationId: 'Added', responses: { '204': { description: 'nothing' } } } };
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
      const changed = await generatedTypes(join(dir, 'openapi.json'));
      expect(changed).toContain('"/api/v1/added-by-the-test"');
      expect(changed).not.toBe(committedTypes());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
