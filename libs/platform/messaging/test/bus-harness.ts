import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { Pool } from 'pg';
import type { MessageBus } from '../src/message-bus';
import type { BusLogger } from '../src/shared/bus-logger';
import { InProcessMessageBus } from '../src/inprocess/in-process-bus';
import { MemoryQueueStore } from '../src/inprocess/memory-queue-store';
import type { QueueStore } from '../src/inprocess/queue-store';
import { pgExecutor, SqlQueueStore } from '../src/inprocess/sql-queue-store';
import { NatsMessageBus } from '../src/nats/nats-bus';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A bus the tests may also crash on purpose. */
export type TestBus = MessageBus & { abort(): void | Promise<void> };

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

export interface BusHarness {
  /** A new bus instance over the same store or server (a "process"). */
  createBus(): Promise<TestBus>;
  logs: LogLine[];
  /** Deletes everything the harness created (streams, schemas) and closes pools. */
  dispose(): Promise<void>;
}

export function runId(): string {
  return `t${process.pid}_${randomUUID().slice(0, 8)}_`;
}

function captureLogger(logs: LogLine[]): BusLogger {
  const push = (level: LogLine['level']) => (message: string, fields?: Record<string, unknown>) =>
    logs.push({ level, message, fields: fields ?? {} });
  return { info: push('info'), warn: push('warn'), error: push('error') };
}

function inProcessHarness(store: QueueStore, onDispose: () => Promise<void>): BusHarness {
  const logs: LogLine[] = [];
  const buses: TestBus[] = [];
  return {
    logs,
    async createBus() {
      await store.init();
      const bus = new InProcessMessageBus({
        store,
        requestTimeoutMs: 2_000,
        pollIntervalMs: 100,
        drainTimeoutMs: 2_000,
        logger: captureLogger(logs),
      });
      buses.push(bus);
      return bus;
    },
    async dispose() {
      await Promise.all(buses.map((bus) => bus.close()));
      await onDispose();
    },
  };
}

export async function memoryHarness(): Promise<BusHarness> {
  return inProcessHarness(new MemoryQueueStore(), async () => undefined);
}

export async function sqlHarness(): Promise<BusHarness> {
  const pool = new Pool({ connectionString: PG_URL, max: 4 });
  const store = new SqlQueueStore(pgExecutor(pool), { schema: `bus_${runId().slice(0, -1)}` });
  return inProcessHarness(store, async () => {
    await store.dropSchema();
    await pool.end();
  });
}

export async function natsHarness(): Promise<BusHarness> {
  const prefix = runId();
  const logs: LogLine[] = [];
  const buses: TestBus[] = [];
  return {
    logs,
    async createBus() {
      const bus = await NatsMessageBus.connect({
        servers: NATS_URL,
        name: 'messaging-test',
        prefix,
        requestTimeoutMs: 2_000,
        drainTimeoutMs: 2_000,
        fetchExpiresMs: 1_000,
        logger: captureLogger(logs),
      });
      buses.push(bus);
      return bus;
    },
    async dispose() {
      await Promise.all(buses.map((bus) => bus.close()));
      await deleteStreams(prefix);
    },
  };
}

/** Removes every stream (and with it every consumer) carrying the run's prefix. */
export async function deleteStreams(prefix: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    const names: string[] = [];
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.startsWith(prefix)) names.push(stream.config.name);
    }
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}

export async function waitFor(condition: () => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
