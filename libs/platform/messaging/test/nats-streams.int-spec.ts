import { queue, type QueueDef } from '@kb/contracts';
import { connect, type NatsConnection } from 'nats';
import { NatsMessageBus } from '../src/nats/nats-bus';
import type { BusLogger } from '../src/shared/bus-logger';
import { deleteStreams, NATS_URL, runId, waitFor } from './bus-harness';

/**
 * Several processes start at once and each widens the same JetStream stream with the subjects it
 * uses. A stream update replaces the whole subject list, so one process can drop a subject another
 * has just added; these tests check that no process fails to start or to publish because of it.
 */
describe('NATS bus: shared streams under concurrent start', () => {
  const quiet: BusLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  let prefix: string;
  let nc: NatsConnection;
  const buses: NatsMessageBus[] = [];

  const bus = async (streams?: QueueDef<unknown>[]) => {
    const b = await NatsMessageBus.connect({
      servers: NATS_URL,
      name: 'streams-test',
      prefix,
      requestTimeoutMs: 2_000,
      drainTimeoutMs: 1_000,
      fetchExpiresMs: 1_000,
      logger: quiet,
      streams,
    });
    buses.push(b);
    return b;
  };
  const defs = (app: string, n: number) => Array.from({ length: n }, (_, i) => queue<{ n: number }>(`test.${app}.job-${i}`, 'PROCESSING'));

  beforeEach(async () => {
    prefix = runId();
    nc = await connect({ servers: NATS_URL });
  });

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
    await nc.close();
    await deleteStreams(prefix);
  });

  it('processes that each consume their own subjects of one stream all start, and every job reaches its consumer', async () => {
    const apps = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    const got = new Map<string, number[]>();
    // Every "process" connects and starts its consumers at the same moment, as the apps of a
    // deployment do when they are started together.
    const started = await Promise.all(
      apps.map(async (app) => {
        const b = await bus();
        await Promise.all(
          defs(app, 4).map((def) =>
            b.consume(def, async (payload) => void got.set(def.subject, [...(got.get(def.subject) ?? []), payload.n]), {
              durable: app,
              ackWaitMs: 2_000,
            }),
          ),
        );
        return b;
      }),
    );
    for (const [i, app] of apps.entries()) for (const def of defs(app, 4)) await started[(i + 1) % apps.length].enqueue(def, { n: i });
    await waitFor(() => got.size === apps.length * 4, 10_000, 'every job');
    expect([...got.values()].every((ns) => ns.length === 1)).toBe(true);
  });

  it('a subject another process dropped from the stream is added again for a consumer and a publisher', async () => {
    const [first, second] = defs('alpha', 2);
    const a = await bus();
    const got: number[] = [];
    await a.consume(first, async (p) => void got.push(p.n), { durable: 'alpha', ackWaitMs: 2_000 });
    // Another process, having read the list before `first` was added, writes its own list back.
    const jsm = await nc.jetstreamManager();
    await jsm.streams.update(`${prefix}PROCESSING`, { subjects: [`${prefix}other.subject`] });

    // This process still believes the stream lists `first`: the publish must not fail for it.
    await a.enqueue(first, { n: 1 });
    // A new consumer on the same subject (another durable) must start as well.
    const again: number[] = [];
    await a.consume(first, async (p) => void again.push(p.n), { durable: 'audit', ackWaitMs: 2_000 });
    await a.enqueue(first, { n: 2 });
    await a.consume(second, async () => undefined, { durable: 'alpha', ackWaitMs: 2_000 });
    await waitFor(() => got.length === 2 && again.length >= 1, 10_000, 'both jobs');
    expect(got.sort()).toEqual([1, 2]);
    const info = await jsm.streams.info(`${prefix}PROCESSING`);
    expect(info.config.subjects).toEqual(
      expect.arrayContaining([`${prefix}other.subject`, `${prefix}${first.subject}`, `${prefix}${second.subject}`]),
    );
  });

  it('declared streams are created with every subject at connect, so concurrent starts never drop one', async () => {
    const all = [...defs('alpha', 3), ...defs('beta', 3)];
    await Promise.all([bus(all), bus(all), bus(all)]);
    const info = await (await nc.jetstreamManager()).streams.info(`${prefix}PROCESSING`);
    const expected = all.flatMap((d) => [`${prefix}${d.subject}`, `${prefix}dlq.${d.subject}`]);
    expect([...(info.config.subjects ?? [])].sort()).toEqual(expected.sort());
  });
});
