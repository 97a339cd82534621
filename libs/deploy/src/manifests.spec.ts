import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, envReads, type EntryPoint } from './env-scan';
import { CUSTOM_RESOURCES, validateObject } from './k8s-schema';
import { unknownFields } from './strict-fields';
import {
  WORKLOAD_KINDS,
  byKind,
  containers,
  entryPointOf,
  find,
  overlays,
  podTemplate,
  render,
  selects,
  type Container,
  type K8sObject,
} from './manifests';

/**
 * Every overlay of k8s/ rendered with kustomize and checked: schemas of the pinned Kubernetes
 * release, images, labels and selectors, probes on the apps' real routes, every variable an app
 * reads without a default provided (and nothing provided that no code reads), Secrets referenced
 * but never created, the migrations of the schemas the overlay runs, and the NATS configuration.
 */
const OVERLAYS = overlays();
const rendered = new Map(OVERLAYS.map((o) => [o, render(o)]));
const objectsOf = (overlay: string) => rendered.get(overlay) as K8sObject[];
const workloads = (objects: K8sObject[]) => objects.filter((o) => WORKLOAD_KINDS.includes(o.kind));
const appContainers = (objects: K8sObject[]) =>
  workloads(objects).flatMap((w) =>
    containers(w).flatMap((c) => {
      const entry = entryPointOf(c);
      return entry ? [{ workload: w, container: c, ...entry }] : [];
    }),
  );
const configValue = (objects: K8sObject[], prefix: string, key: string) =>
  objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith(prefix))?.['data']?.[key] as string | undefined;

/** The health routes of every app (libs/platform/observability: @Get decorators of its controller). */
const HEALTH_ROUTES = [
  ...readFileSync(join(ROOT, 'libs/platform/observability/src/observability.module.ts'), 'utf8').matchAll(/@Get\('([^']+)'\)/g),
].map((m) => `/${m[1]}`);
/** The apps whose schema a migration Job must run, and the apps that hold a schema. */
const SCHEMA_APPS = ['accounts', 'content', 'reporting'];
/** Keys CloudNativePG writes into the `<cluster>-app` Secret. */
const CNPG_APP_SECRET_KEYS = ['username', 'password', 'host', 'port', 'dbname', 'uri', 'jdbc-uri', 'pgpass'];

const readsCache = new Map<string, ReturnType<typeof envReads>>();
const readsOf = (app: string) => {
  if (!readsCache.has(app)) readsCache.set(app, envReads(app as EntryPoint));
  return readsCache.get(app) as ReturnType<typeof envReads>;
};

/** Names a container receives: env entries, and the keys of the ConfigMaps it takes whole. */
function provided(objects: K8sObject[], c: Container): Map<string, string | undefined> {
  const names = new Map<string, string | undefined>();
  for (const from of c.envFrom ?? []) {
    if (from.secretRef) throw new Error(`${c.name}: take Secret keys one by one (secretKeyRef), so the variables are known`);
    const cm = find(objects, 'ConfigMap', from.configMapRef?.name as string);
    for (const [k, v] of Object.entries((cm?.['data'] ?? {}) as Record<string, string>)) names.set(k, v);
  }
  for (const e of c.env ?? []) names.set(e.name, e.value);
  return names;
}

test('there are a global overlay and at least two zones', () => {
  const zones = OVERLAYS.map((o) => configValue(objectsOf(o), 'kb-config', 'ZONE'));
  expect(zones.filter((z) => z === 'global')).toHaveLength(1);
  expect(zones.filter((z) => z !== 'global').length).toBeGreaterThanOrEqual(2);
  expect(new Set(zones).size).toBe(zones.length);
  expect(new Set(OVERLAYS.map((o) => objectsOf(o)[0]?.metadata.namespace)).size).toBe(OVERLAYS.length);
});

test('no object of any overlay has a field the Kubernetes API does not know', () => {
  const core = OVERLAYS.flatMap((o) => objectsOf(o)).filter((o) => !CUSTOM_RESOURCES[`${o.apiVersion} ${o.kind}`]);
  expect(core.length).toBeGreaterThan(50);
  expect(unknownFields(core)).toEqual([]);
}, 120_000);

describe.each(OVERLAYS)('overlay %s', (overlay) => {
  const objects = objectsOf(overlay);
  const zone = configValue(objects, 'kb-config', 'ZONE') as string;
  const isGlobal = zone === 'global';
  const apps = appContainers(objects);
  const appNames = apps.map((a) => a.app).filter((a) => a !== 'migrate');

  test('runs the apps of its role: gateway + accounts globally, the rest in a zone', () => {
    expect(appNames.sort()).toEqual(isGlobal ? ['accounts', 'gateway'] : ['content', 'gateway', 'reporting', 'understanding']);
    expect(find(objects, 'StatefulSet', 'nats')).toBeDefined();
  });

  test('every object is valid against the schemas of its API', () => {
    const problems = objects.flatMap((o) => validateObject(o).map((p) => `${o.kind}/${o.metadata.name}: ${p}`));
    expect(problems).toEqual([]);
    expect(objects.every((o) => o.metadata.namespace === objects[0]?.metadata.namespace)).toBe(true);
  });

  test('every image is pinned: a version tag or a digest, never latest', () => {
    const images = workloads(objects).flatMap((w) => containers(w).map((c) => c.image));
    const bad = images.filter(
      (i) =>
        !/^[^:@]+(:[\w][\w.-]*)?(@sha256:[0-9a-f]{64})?$/.test(i) ||
        /:latest($|@)/.test(i) ||
        !/[:@]/.test(i.replace(/^[^/]+\.[^/]+(:\d+)?\//, '')),
    );
    expect(bad).toEqual([]);
    const cluster = byKind(objects, 'Cluster')[0];
    if (cluster) expect(cluster['spec'].imageName).not.toMatch(/:latest/);
  });

  test('selectors agree with the labels of what they select', () => {
    const pods = workloads(objects).map((w) => ({ w, labels: podTemplate(w).metadata.labels ?? {} }));
    const problems: string[] = [];
    for (const { w, labels } of pods) {
      if (w.kind !== 'Job' && !selects(w['spec'].selector, labels))
        problems.push(`${w.kind}/${w.metadata.name}: selector misses its own pods`);
    }
    for (const svc of byKind(objects, 'Service')) {
      const targets = pods.filter((p) => p.w.kind !== 'Job' && selects(svc['spec'].selector, p.labels));
      if (targets.length === 0) problems.push(`Service/${svc.metadata.name} selects no pods`);
      for (const port of svc['spec'].ports) {
        const named = typeof port.targetPort === 'string';
        const ok = targets.every((t) =>
          containers(t.w).some((c) =>
            (c.ports ?? []).some((p) => (named ? p.name === port.targetPort : p.containerPort === (port.targetPort ?? port.port))),
          ),
        );
        if (!ok) problems.push(`Service/${svc.metadata.name}: target port ${port.targetPort} missing`);
      }
    }
    for (const pdb of byKind(objects, 'PodDisruptionBudget')) {
      if (!pods.some((p) => p.w.kind !== 'Job' && selects(pdb['spec'].selector, p.labels)))
        problems.push(`PodDisruptionBudget/${pdb.metadata.name} selects no pods`);
    }
    for (const w of pods.filter((p) => p.w.kind !== 'Job')) {
      if (!byKind(objects, 'PodDisruptionBudget').some((pdb) => selects(pdb['spec'].selector, w.labels)))
        problems.push(`${w.w.kind}/${w.w.metadata.name} has no PodDisruptionBudget`);
    }
    // Pods the operators create: PostgreSQL instances (CloudNativePG labels them with their Cluster)
    // and cert-manager's ACME solver for an Ingress whose certificate it issues.
    const operatorPods = [
      ...byKind(objects, 'Cluster').map((c) => ({ 'cnpg.io/cluster': c.metadata.name })),
      ...(byKind(objects, 'Ingress').some((i) => i.metadata.annotations?.['cert-manager.io/cluster-issuer'])
        ? [{ 'acme.cert-manager.io/http01-solver': 'true' }]
        : []),
    ];
    for (const np of byKind(objects, 'NetworkPolicy')) {
      const sel = np['spec'].podSelector;
      const targets = [...pods.map((p) => p.labels), ...operatorPods].filter((labels) => selects(sel, labels));
      if (Object.keys(sel.matchLabels ?? {}).length > 0 && targets.length === 0)
        problems.push(`NetworkPolicy/${np.metadata.name} selects no pods`);
      // Every peer a rule names inside the namespace exists.
      for (const rule of [
        ...(np['spec'].ingress ?? []).map((r: { from?: unknown[] }) => r.from),
        ...(np['spec'].egress ?? []).map((r: { to?: unknown[] }) => r.to),
      ]) {
        for (const peer of (rule ?? []) as { podSelector?: { matchLabels?: Record<string, string> }; namespaceSelector?: unknown }[]) {
          if (!peer.podSelector || peer.namespaceSelector) continue;
          const peerSel = peer.podSelector;
          if (![...pods.map((p) => p.labels), ...operatorPods].some((labels) => selects(peerSel, labels)))
            problems.push(`NetworkPolicy/${np.metadata.name} names peers ${JSON.stringify(peerSel.matchLabels)} that do not exist`);
        }
      }
    }
    for (const w of pods) {
      const own = byKind(objects, 'NetworkPolicy').filter(
        (np) => Object.keys(np['spec'].podSelector.matchLabels ?? {}).length > 0 && selects(np['spec'].podSelector, w.labels),
      );
      if (own.length === 0) problems.push(`${w.w.kind}/${w.w.metadata.name} has no NetworkPolicy of its own`);
    }
    for (const hpa of byKind(objects, 'HorizontalPodAutoscaler')) {
      const ref = hpa['spec'].scaleTargetRef;
      if (!find(objects, ref.kind, ref.name))
        problems.push(`HorizontalPodAutoscaler/${hpa.metadata.name} scales a missing ${ref.kind}/${ref.name}`);
    }
    for (const ing of byKind(objects, 'Ingress')) {
      for (const rule of ing['spec'].rules) {
        for (const path of rule.http.paths) {
          const svc = find(objects, 'Service', path.backend.service.name);
          if (!svc || !svc['spec'].ports.some((p: { name: string }) => p.name === path.backend.service.port.name))
            problems.push(`Ingress/${ing.metadata.name}: backend ${path.backend.service.name}:${path.backend.service.port.name} missing`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('probes call the health routes the apps serve, on their own port', () => {
    expect(HEALTH_ROUTES).toEqual(expect.arrayContaining(['/health/live', '/health/ready']));
    for (const { container: c } of apps.filter((a) => a.app !== 'migrate')) {
      const port = c.ports?.find((p) => p.name === 'http');
      expect(String(port?.containerPort)).toBe(c.env?.find((e) => e.name === 'PORT')?.value);
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        expect(c[probe]?.httpGet).toBeDefined();
        expect(HEALTH_ROUTES).toContain(c[probe].httpGet.path);
        expect(c[probe].httpGet.port).toBe('http');
      }
      expect(c['readinessProbe'].httpGet.path).toBe('/health/ready');
    }
  });

  test('every app gets what it reads without a default, and nothing no code reads', () => {
    const problems: string[] = [];
    for (const { container: c, app, args } of apps) {
      const reads = readsOf(app);
      const env = provided(objects, c);
      for (const name of env.keys()) if (!reads.has(name)) problems.push(`${app}: ${name} is provided but ${app} never reads it`);
      const s3 = env.get('BLOB_DRIVER') === 's3';
      for (const read of reads.values()) {
        if (!read.required || env.has(read.name)) continue;
        if (read.name.startsWith('BLOB_S3_') && !s3) continue;
        problems.push(`${app}: ${read.name} has no default (${read.file}) and is not provided`);
      }
      // What production needs on top: its secret, its zone, NATS as its own user, its own schema.
      const needed =
        app === 'migrate'
          ? args.map((s) => `${s.toUpperCase()}_DATABASE_URL`)
          : [
              'KB_SECRET',
              'ZONE',
              'PUBLIC_BASE_URL',
              'BUS_TRANSPORT',
              'NATS_URL',
              'NATS_USER',
              'NATS_PASSWORD',
              'DATA_DIR',
              'PORT',
              ...(SCHEMA_APPS.includes(app) ? [`${app.toUpperCase()}_DATABASE_URL`, 'MIGRATIONS_RUN'] : []),
              ...(reads.has('BLOB_DRIVER') ? ['BLOB_DRIVER'] : []),
              ...(app === 'understanding' ? ['EMBEDDING_MODEL_DIR', 'TRANSCRIPTION_MODEL_DIR'] : []),
            ];
      for (const name of needed) if (!env.has(name)) problems.push(`${app}: ${name} is not provided`);
      if (app !== 'migrate') {
        if (env.get('BUS_TRANSPORT') !== 'nats') problems.push(`${app}: BUS_TRANSPORT must be nats`);
        if (env.get('NATS_USER') !== app) problems.push(`${app}: NATS_USER must be ${app}`);
        if (SCHEMA_APPS.includes(app) && env.get('MIGRATIONS_RUN') !== 'false')
          problems.push(`${app}: migrations run in the Job, not at start`);
        if (reads.has('BLOB_DRIVER') && env.get('BLOB_DRIVER') !== 's3') problems.push(`${app}: blobs must be in S3`);
        if (env.get('ZONE') !== zone) problems.push(`${app}: ZONE`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('the model folders are mounted read-only where the workers look for them', () => {
    for (const { workload, container: c } of apps.filter((a) => a.app === 'understanding')) {
      const volumes = podTemplate(workload).spec.volumes as { name: string; persistentVolumeClaim?: { claimName: string } }[];
      for (const variable of ['EMBEDDING_MODEL_DIR', 'TRANSCRIPTION_MODEL_DIR']) {
        const dir = c.env?.find((e) => e.name === variable)?.value;
        const mount = (c['volumeMounts'] as { name: string; mountPath: string; readOnly?: boolean }[]).find((m) => m.mountPath === dir);
        expect(mount?.readOnly).toBe(true);
        const claim = volumes.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
        expect(find(objects, 'PersistentVolumeClaim', claim as string)).toBeDefined();
      }
    }
  });

  test('pods run as non-root with a read-only root filesystem, bounded resources and no token', () => {
    const problems: string[] = [];
    for (const w of workloads(objects)) {
      const pod = podTemplate(w).spec;
      if (pod.securityContext?.runAsNonRoot !== true || !(pod.securityContext?.runAsUser > 0))
        problems.push(`${w.metadata.name}: runAsNonRoot with a non-zero uid`);
      if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault') problems.push(`${w.metadata.name}: seccomp RuntimeDefault`);
      if (pod.automountServiceAccountToken !== false) problems.push(`${w.metadata.name}: no service account token`);
      for (const c of containers(w)) {
        const sc = c['securityContext'] ?? {};
        if (sc.readOnlyRootFilesystem !== true || sc.allowPrivilegeEscalation !== false || !(sc.capabilities?.drop ?? []).includes('ALL'))
          problems.push(`${w.metadata.name}/${c.name}: securityContext`);
        if (!c['resources']?.requests?.cpu || !c['resources']?.requests?.memory || !c['resources']?.limits?.memory)
          problems.push(`${w.metadata.name}/${c.name}: requests and a memory limit`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('Secrets are referenced, never created; each comes from the secret operator, the database operator or cert-manager', () => {
    expect(byKind(objects, 'Secret')).toEqual([]);
    const sources = new Map<string, string[]>();
    for (const es of byKind(objects, 'ExternalSecret'))
      sources.set(
        es['spec'].target.name,
        es['spec'].data.map((d: { secretKey: string }) => d.secretKey),
      );
    for (const cluster of byKind(objects, 'Cluster')) sources.set(`${cluster.metadata.name}-app`, CNPG_APP_SECRET_KEYS);
    for (const ing of byKind(objects, 'Ingress')) {
      if (ing.metadata.annotations?.['cert-manager.io/cluster-issuer'])
        for (const tls of ing['spec'].tls ?? []) sources.set(tls.secretName, ['tls.crt', 'tls.key']);
      else expect(ing['spec'].tls ?? []).toEqual([]);
    }
    const problems: string[] = [];
    for (const w of workloads(objects)) {
      for (const c of containers(w)) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref && !ref.optional && !sources.get(ref.name)?.includes(ref.key))
            problems.push(`${w.metadata.name}/${c.name}: ${e.name} from Secret ${ref.name}/${ref.key}, which nothing provides`);
          const cm = e.valueFrom?.configMapKeyRef;
          if (cm && find(objects, 'ConfigMap', cm.name)?.['data']?.[cm.key] === undefined)
            problems.push(`${w.metadata.name}/${c.name}: ${e.name} from ConfigMap ${cm.name}/${cm.key}, missing`);
        }
        for (const from of c.envFrom ?? []) {
          if (from.secretRef && !sources.has(from.secretRef.name))
            problems.push(`${w.metadata.name}/${c.name}: Secret ${from.secretRef.name}, which nothing provides`);
          if (from.configMapRef && !find(objects, 'ConfigMap', from.configMapRef.name))
            problems.push(`${w.metadata.name}/${c.name}: ConfigMap ${from.configMapRef.name} missing`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('one versioned migration Job, run as a pre-sync hook, for exactly the schemas of the apps it runs', () => {
    const jobs = byKind(objects, 'Job');
    expect(jobs).toHaveLength(1);
    const job = jobs[0] as K8sObject;
    expect(job.metadata.annotations?.['argocd.argoproj.io/hook']).toBe('PreSync');
    const migrate = apps.find((a) => a.app === 'migrate');
    expect(migrate?.args.sort()).toEqual(appNames.filter((a) => SCHEMA_APPS.includes(a)).sort());
    const tag = /:([\w.-]+)$/.exec(migrate?.container.image ?? '')?.[1];
    expect(tag).toBeDefined();
    expect(job.metadata.name.endsWith(`-${tag}`)).toBe(true);
    // The apps do not migrate at start, so their image and the Job's are the same release.
    for (const a of apps) expect(a.container.image).toBe(migrate?.container.image);
  });

  test('the processing workers scale on CPU and on the processing queue depth', () => {
    const hpas = byKind(objects, 'HorizontalPodAutoscaler');
    if (isGlobal) return expect(hpas).toEqual([]);
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'understanding') as K8sObject;
    // The HPA alone sets the replica count (an apply of a Deployment with one would reset it).
    expect(find(objects, 'Deployment', 'understanding')?.['spec'].replicas).toBeUndefined();
    expect(hpa['spec'].scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'understanding' });
    const metrics = hpa['spec'].metrics as {
      type: string;
      resource?: { name: string };
      external?: { metric: { name: string; selector: { matchLabels: Record<string, string> } } };
    }[];
    expect(metrics.find((m) => m.type === 'Resource')?.resource?.name).toBe('cpu');
    const queue = metrics.find((m) => m.type === 'External')?.external?.metric;
    expect(queue?.selector.matchLabels).toEqual({ stream: 'PROCESSING', consumer: 'understanding-workers__understanding_field_process' });
    // The consumer is the one the workers pull from, and the adapter rule serves that metric.
    expect(readFileSync(join(ROOT, 'libs/understanding/src/pipeline/processing-worker.service.ts'), 'utf8')).toContain(
      "durable: 'understanding-workers'",
    );
    expect(readFileSync(join(ROOT, 'k8s/examples/monitoring/prometheus-adapter-rules.yaml'), 'utf8')).toContain(`as: ${queue?.name}`);
  });

  test('the Ingress sends the routes of its role to the gateway', () => {
    const ingress = find(objects, 'Ingress', 'gateway') as K8sObject;
    const rule = ingress['spec'].rules[0];
    expect(rule.host.startsWith(`${zone}.`)).toBe(true);
    expect(configValue(objects, 'kb-config', 'PUBLIC_BASE_URL')).toBe(`https://${rule.host}`);
    const paths = rule.http.paths.map((p: { path: string }) => p.path);
    if (isGlobal)
      expect(paths).toEqual(expect.arrayContaining(['/api/v1/user', '/api/v1/accounts', '/api/v1/account', '/api/v1/auth', '/auth']));
    else expect(paths).toEqual(['/api']);
    expect(paths).not.toContain('/metrics');
  });

  test('NATS: JetStream in a 3-server cluster, a configuration nats-server accepts, every password variable provided', () => {
    const nats = find(objects, 'StatefulSet', 'nats') as K8sObject;
    expect(nats['spec'].replicas).toBe(3);
    // The apps' streams are replicated on every server.
    expect(configValue(objects, 'kb-config', 'BUS_STREAM_REPLICAS')).toBe('3');
    const config = byKind(objects, 'ConfigMap').find((o) => o.metadata.name.startsWith('nats-config'))?.['data'] as Record<string, string>;
    expect(config['main.conf']).toContain('include ./nats-server.conf');
    expect(config['main.conf']).toMatch(/cluster \{/);
    expect(config['main.conf']).toContain(isGlobal ? 'leafnodes {\n  port: 7422' : 'remotes: [');
    const server = containers(nats).find((c) => c.name === 'nats') as Container;
    const secretKeys = byKind(objects, 'ExternalSecret')
      .find((es) => es['spec'].target.name === server.envFrom?.[0]?.secretRef?.name)
      ?.['spec'].data.map((d: { secretKey: string }) => d.secretKey) as string[];
    const env = {
      ...Object.fromEntries((server.env ?? []).map((e) => [e.name, 'n1'])),
      ...Object.fromEntries(secretKeys.map((k) => [k, k === 'LEAFNODE_URL' ? 'nats-leaf://zone:p1@127.0.0.1:7422' : 'p1'])),
    };
    const variables = new Set(
      [
        ...Object.values(config)
          .join('\n')
          .matchAll(/\$([A-Z_][A-Z0-9_]*)\b(?!\.)/g),
      ].map((m) => m[1] as string),
    );
    expect([...variables].filter((v) => !(v in env))).toEqual([]);
    const bin = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';
    if (!existsSync(bin)) throw new Error(`nats-server not found at ${bin} (NATS_SERVER_BIN)`);
    const dir = mkdtempSync(join(tmpdir(), 'nats-conf-'));
    try {
      for (const [file, text] of Object.entries(config)) writeFileSync(join(dir, file), text);
      const out = execFileSync(bin, ['-c', join(dir, 'main.conf'), '-t'], {
        cwd: dir,
        env: { PATH: process.env['PATH'], ...env },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out + '').toBeDefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
