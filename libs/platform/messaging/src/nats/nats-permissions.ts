import { ALL_SUBJECTS, BUS_ACCESS, BusApps, type BusApp, type StreamName } from '@kb/contracts';
import { deadLetterSubject } from '../shared/dead-letter';
import { inboxPrefix } from './nats-codec';

export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/** Every stream of the system: each app declares all of them at connect (see createRuntimeBus). */
export const ALL_STREAMS: readonly StreamName[] = [
  ...new Set(ALL_SUBJECTS.flatMap((d) => (d.kind === 'event' || d.kind === 'queue' ? [d.stream] : []))),
].sort();

/**
 * The subjects one app may publish to and subscribe on, from its row of BUS_ACCESS. `prefix` is the
 * BUS_PREFIX the apps run with (empty in production; tests use one per run).
 *
 * - Requests it sends and events/jobs it emits; the dead letters of what it consumes.
 * - Replies: its own arrive under `_INBOX.<app>.` (nobody else may read them); an app that answers
 *   requests may publish a reply to any caller's inbox and hear the callers' cancels.
 * - JetStream: stream look-up, creation and widening for every stream (each app declares them all at
 *   start); consumers, pulls and acks only on the streams it consumes from. No direct message reads.
 */
export function natsPermissions(app: BusApp, prefix = ''): NatsPermissions {
  const access = BUS_ACCESS[app];
  const own = inboxPrefix(app);
  // Live subjects carry a key as their last token (`<subject>.<key>`), and have no dead letters or streams.
  const flow = (d: { kind: string; subject: string }) => prefix + d.subject + (d.kind === 'live' ? '.*' : '');
  const receives = access.receives.filter((d) => d.kind !== 'live');
  const publish = [
    ...access.calls.map((d) => prefix + d.subject),
    ...access.emits.map(flow),
    ...receives.map((d) => prefix + deadLetterSubject(d.subject)),
    `${own}.>`,
    '$JS.API.INFO',
    ...ALL_STREAMS.flatMap((s) => ['INFO', 'CREATE', 'UPDATE'].map((op) => `$JS.API.STREAM.${op}.${prefix}${s}`)),
  ];
  const subscribe = [
    ...access.serves.map((d) => prefix + d.subject),
    ...access.receives.filter((d) => d.kind === 'live').map(flow),
    `${own}.>`,
  ];
  if (access.serves.length > 0) {
    publish.push('_INBOX.*.*');
    subscribe.push('_INBOX.*.*.cancel');
  }
  for (const stream of new Set(receives.flatMap((d) => ('stream' in d ? [d.stream] : [])))) {
    const name = prefix + stream;
    // CONSUMER.CREATE.<stream> (ephemeral), CONSUMER.{CREATE,INFO,DELETE}.<stream>.<consumer>[.<filter>],
    // CONSUMER.{DURABLE.CREATE,MSG.NEXT}.<stream>.<consumer>, and the acks of its deliveries.
    publish.push(`$JS.API.CONSUMER.*.${name}`, `$JS.API.CONSUMER.*.${name}.>`, `$JS.API.CONSUMER.*.*.${name}.>`, `$JS.ACK.${name}.>`);
  }
  return { publish: { allow: unique(publish) }, subscribe: { allow: unique(subscribe) } };
}

/** The environment variable the server reads an app's password from. */
export function natsPasswordVariable(app: BusApp): string {
  return `${app.toUpperCase()}_NATS_PASSWORD`;
}

export interface NatsServerConfigOptions {
  prefix?: string;
  /** host:port the server listens on. */
  listen: string;
  /** JetStream storage directory. */
  storeDir: string;
  /** Optional TLS of the client port (server certificate and key, CA for verifying clients). */
  tls?: { certFile: string; keyFile: string; caFile?: string };
}

/**
 * A nats-server configuration with one user per app, its permissions from BUS_ACCESS and its
 * password read from the server's environment (`<APP>_NATS_PASSWORD`). There is no anonymous user:
 * a connection without credentials is refused.
 */
export function natsServerConfig(options: NatsServerConfigOptions): string {
  const lines = [
    '# Generated from libs/contracts/src/bus-access.ts by tools/scripts/nats-config.mjs: do not edit by hand.',
    `listen: ${quote(options.listen)}`,
    `jetstream { store_dir: ${quote(options.storeDir)} }`,
  ];
  if (options.tls) {
    const { certFile, keyFile, caFile } = options.tls;
    lines.push(`tls { cert_file: ${quote(certFile)}, key_file: ${quote(keyFile)}${caFile ? `, ca_file: ${quote(caFile)}` : ''} }`);
  }
  lines.push('authorization {', '  users: [');
  for (const app of BusApps) {
    const { publish, subscribe } = natsPermissions(app, options.prefix ?? '');
    lines.push(
      `    { user: ${quote(app)}, password: $${natsPasswordVariable(app)}, permissions: {`,
      `        publish: { allow: ${list(publish.allow)} }`,
      `        subscribe: { allow: ${list(subscribe.allow)} }`,
      '    } }',
    );
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

function list(subjects: string[]): string {
  return `[\n          ${subjects.map(quote).join(',\n          ')}\n        ]`;
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
