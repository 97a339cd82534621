import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

const ADMIN_URL = process.env['KB_TEST_POSTGRES_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database on the machine's PostgreSQL for one test file: services use fixed schema names,
 * so parallel test files each get their own database instead of sharing one.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `kb_it_${label.replace(/[^a-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    drop: async () => {
      const a = new Client({ connectionString: ADMIN_URL });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** Polls until `probe` returns a value (for work done asynchronously by consumers). */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
