import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './env-scan';

/** A rendered Kubernetes object, loosely typed: the specs read the parts they check. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [key: string]: any;
};

export const OVERLAYS_DIR = join(ROOT, 'k8s', 'overlays');

export function overlays(): string[] {
  return readdirSync(OVERLAYS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

/**
 * Renders one overlay with kustomize as built into kubectl (`kubectl kustomize`, kustomize 5.5 on
 * this project's machine image). KUBECTL names another binary.
 */
export function render(overlay: string): K8sObject[] {
  const kubectl = process.env['KUBECTL'] ?? 'kubectl';
  const out = execFileSync(kubectl, ['kustomize', join(OVERLAYS_DIR, overlay)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return parseAllDocuments(out)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${overlay}: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject;
    })
    .filter((o) => o !== null);
}

export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'Job'];

/** The pod template of a workload. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function podTemplate(o: K8sObject): { metadata: { labels?: Record<string, string> }; spec: any } {
  return o['spec'].template;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [key: string]: any;
}

export function containers(o: K8sObject): Container[] {
  const spec = podTemplate(o).spec;
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

export function byKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

/** Does a label selector (matchLabels only, as these manifests use) select these labels? */
export function selects(
  selector: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | Record<string, string>,
  labels: Record<string, string> | undefined,
): boolean {
  const match = (
    'matchLabels' in selector || 'matchExpressions' in selector
      ? (selector as { matchLabels?: Record<string, string> }).matchLabels
      : selector
  ) as Record<string, string> | undefined;
  if ('matchExpressions' in selector && selector.matchExpressions) throw new Error('matchExpressions are not used in these manifests');
  return Object.entries(match ?? {}).every(([k, v]) => labels?.[k] === v);
}

/**
 * Which entry point a container runs: `dist/apps/<app>/src/main.js`, or the migrations
 * (`dist/apps/standalone/src/migrate.js <service…>`).
 */
export function entryPointOf(c: Container): { app: string; args: string[] } | undefined {
  const [node, script, ...rest] = c.command ?? [];
  if (node !== 'node' || !script) return undefined;
  const main = /^dist\/apps\/([a-z]+)\/src\/main\.js$/.exec(script);
  if (main) return { app: main[1] as string, args: rest };
  if (script === 'dist/apps/standalone/src/migrate.js') return { app: 'migrate', args: rest };
  throw new Error(`container ${c.name} runs an unknown script ${script}`);
}
