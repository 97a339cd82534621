import { queue } from '@kb/contracts';
import { connect, type NatsConnection } from 'nats';
import { NatsMessageBus } from '../src/nats/nats-bus';
import type { BusLogger } from '../src/shared/bus-logger';
import { deleteStreams, NATS_URL, runId } from './bus-harness';

/**
 * The replica count of the streams a process creates (BUS_STREAM_REPLICAS: 3 in the Kubernetes
 * clusters of three NATS servers) reaches JetStream: the single test server keeps a stream of one
 * copy and refuses three, and a refused connect leaves no connection open.
 */
describe('NATS bus: stream replicas', () => {
  const quiet: BusLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  let prefix: string;
  let nc: NatsConnection;

  beforeEach(async () => {
    prefix = runId();
    nc = await connect({ servers: NATS_URL });
  });

  afterEach(async () => {
    await deleteStreams(prefix);
    await nc.close();
  });

  const streams = [queue<{ n: number }>('test.replicas.job', 'PROCESSING')];

  it('creates streams with the configured number of copies', async () => {
    const bus = await NatsMessageBus.connect({
      servers: NATS_URL,
      name: 'replicas-test',
      prefix,
      logger: quiet,
      streams,
      streamReplicas: 1,
    });
    const info = await (await nc.jetstreamManager()).streams.info(`${prefix}PROCESSING`);
    expect(info.config.num_replicas).toBe(1);
    await bus.close();
  });

  it('asks for three copies when told, which a single server refuses', async () => {
    await expect(
      NatsMessageBus.connect({ servers: NATS_URL, name: 'replicas-test', prefix, logger: quiet, streams, streamReplicas: 3 }),
    ).rejects.toThrow(/replica|clustered/i);
    const names: string[] = [];
    for await (const name of (await nc.jetstreamManager()).streams.names()) names.push(name);
    expect(names).not.toContain(`${prefix}PROCESSING`);
  }, 30_000);
});
