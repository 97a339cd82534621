import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { ROOT } from './env-scan';
import type { K8sObject } from './manifests';

/**
 * Fields the Kubernetes API does not know (a misspelt `readinesProbe` is valid JSON schema-wise:
 * the API server would drop it, or refuse it under strict field validation). Each object is
 * assigned, as an object literal, to the TypeScript interface `kubernetes-models` declares for its
 * kind, so the compiler's excess-property check names every unknown field, at any depth.
 */
export function unknownFields(objects: readonly K8sObject[]): string[] {
  const base = join(ROOT, 'tmp');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'k8s-fields-'));
  try {
    const file = join(dir, 'objects.ts');
    const lines = objects.flatMap((o, i) => [
      `import type { I${o.kind} as T${i} } from 'kubernetes-models/${o.apiVersion}/${o.kind}';`,
      `export const o${i}: T${i} = ${JSON.stringify(o)};`,
    ]);
    writeFileSync(file, lines.join('\n'));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      baseUrl: ROOT,
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
      const o = objects[Math.floor(line / 2)];
      return `${o ? `${o.kind}/${o.metadata.name}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
