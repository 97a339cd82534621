import type { K8sObject } from './manifests';

/**
 * Validation against the JSON schemas of Kubernetes' own API (the `kubernetes-models` package,
 * pinned in package.json: generated from the OpenAPI document of one Kubernetes release). Objects
 * of the operators' resources are checked against the few fields these manifests rely on.
 */
export const CUSTOM_RESOURCES: Record<string, (o: K8sObject) => string[]> = {
  'external-secrets.io/v1 ExternalSecret': (o) => {
    const spec = o['spec'];
    const problems: string[] = [];
    if (!spec?.secretStoreRef?.name) problems.push('spec.secretStoreRef.name is required');
    if (!spec?.target?.name) problems.push('spec.target.name is required');
    if (!Array.isArray(spec?.data) || spec.data.length === 0) problems.push('spec.data must list the keys');
    for (const d of spec?.data ?? [])
      if (!d.secretKey || !d.remoteRef?.key) problems.push(`data entry ${JSON.stringify(d)} needs secretKey and remoteRef.key`);
    return problems;
  },
  'postgresql.cnpg.io/v1 Cluster': (o) => {
    const spec = o['spec'];
    const problems: string[] = [];
    if (!Number.isInteger(spec?.instances) || spec.instances < 1) problems.push('spec.instances must be a positive integer');
    if (!spec?.storage?.size) problems.push('spec.storage.size is required');
    if (!/:\d+(\.\d+)*(@sha256:[0-9a-f]{64})?$/.test(spec?.imageName ?? '')) problems.push('spec.imageName must name a PostgreSQL version');
    return problems;
  },
};

/**
 * The API versions these manifests may use: served by Kubernetes 1.29 through 1.33 (the package's
 * schemas also keep versions Kubernetes has removed, such as networking.k8s.io/v1beta1 Ingress).
 */
export const SERVED_API_VERSIONS: Record<string, string[]> = {
  v1: ['ConfigMap', 'Service', 'PersistentVolumeClaim', 'Secret', 'ServiceAccount'],
  'apps/v1': ['Deployment', 'StatefulSet'],
  'batch/v1': ['Job', 'CronJob'],
  'policy/v1': ['PodDisruptionBudget'],
  'networking.k8s.io/v1': ['NetworkPolicy', 'Ingress'],
  'autoscaling/v2': ['HorizontalPodAutoscaler'],
};

/** Problems found in one object; empty when it is valid. */
export function validateObject(o: K8sObject): string[] {
  const custom = CUSTOM_RESOURCES[`${o.apiVersion} ${o.kind}`];
  if (custom) return custom(o);
  if (!SERVED_API_VERSIONS[o.apiVersion]?.includes(o.kind))
    return [`${o.apiVersion} ${o.kind} is not in the served API versions these manifests target`];
  let group: Record<string, new (data: unknown) => { validate(): void }>;
  try {
    group = require(`kubernetes-models/${o.apiVersion}`);
  } catch {
    return [`unknown apiVersion ${o.apiVersion}`];
  }
  const Model = group[o.kind];
  if (!Model) return [`unknown kind ${o.kind} in ${o.apiVersion}`];
  try {
    new Model(o).validate();
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}
