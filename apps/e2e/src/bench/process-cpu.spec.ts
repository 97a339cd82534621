import { spawn } from 'node:child_process';
import { backendDatabase, cpuPerRequest, roleOf, sampleCpu } from './process-cpu';

describe('process CPU by role', () => {
  it('names a process by what it runs', () => {
    expect(roleOf('/usr/bin/node /repo/dist/apps/gateway/src/main.js')).toBe('gateway');
    expect(roleOf('/usr/bin/node --cpu-prof /repo/dist/apps/standalone/src/main.js')).toBe('standalone');
    expect(roleOf('/usr/bin/node /repo/dist/libs/platform/database/src/bin/pglite-server.js')).toBe('pglite');
    expect(roleOf('/usr/sbin/nats-server -c /tmp/x/nats.conf')).toBe('nats');
    expect(roleOf('postgres: postgres kb_e2e_1234 127.0.0.1(5555) idle')).toBe('postgres');
    expect(roleOf('postgres: 15/main: postgres kb_e2e_1234 127.0.0.1(5555) idle')).toBe('postgres');
    expect(roleOf('postgres: 15/main: checkpointer ')).toBeUndefined();
    expect(roleOf('/bin/sh -c true')).toBeUndefined();
  });

  it('reads the database of a PostgreSQL backend with or without the cluster name', () => {
    expect(backendDatabase('postgres: 15/main: postgres kb_e2e_ab 127.0.0.1(41234) idle in transaction')).toBe('kb_e2e_ab');
    expect(backendDatabase('postgres: app kb 10.0.0.2(5000) SELECT')).toBe('kb');
    expect(backendDatabase('postgres: 15/main: walwriter ')).toBeUndefined();
  });

  it('divides each role’s CPU by the requests and totals it, process by process', () => {
    const before = new Map([
      [10, { role: 'gateway', ticks: 100 }],
      [11, { role: 'content', ticks: 50 }],
      // a backend whose connection closes in the window: its past is not taken away from the others
      [20, { role: 'postgres', ticks: 5000 }],
      [21, { role: 'postgres', ticks: 40 }],
    ]);
    const after = new Map([
      [10, { role: 'gateway', ticks: 300 }],
      [11, { role: 'content', ticks: 150 }],
      [12, { role: 'nats', ticks: 10 }],
      [21, { role: 'postgres', ticks: 140 }],
      // a new backend
      [22, { role: 'postgres', ticks: 30 }],
    ]);
    // ticks are 10 ms: 200 ticks over 1000 requests = 2 ms each
    expect(cpuPerRequest(before, after, 1000)).toEqual({
      cpu_us_gateway: 2000,
      cpu_us_content: 1000,
      cpu_us_nats: 100,
      cpu_us_postgres: 1300,
      cpu_us_total: 4400,
    });
  });

  it('counts a reused pid with another role from 0', () => {
    const before = new Map([[10, { role: 'postgres', ticks: 900 }]]);
    const after = new Map([[10, { role: 'content', ticks: 20 }]]);
    expect(cpuPerRequest(before, after, 1)).toEqual({ cpu_us_content: 200_000, cpu_us_total: 200_000 });
  });

  it('counts the CPU a child process spends', async () => {
    const script = '/repo/dist/apps/content/src/main.js';
    // A busy child whose command line names the content app (the path need not exist for /proc to show it).
    const busy = spawn(process.execPath, ['-e', 'const end = Date.now() + 1500; while (Date.now() < end);', script], { stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const start = sampleCpu();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const end = sampleCpu();
    busy.kill();
    const used = cpuPerRequest(start, end, 1)['cpu_us_content'] ?? 0;
    // Loose on purpose: on a loaded machine the child gets a fraction of a core.
    expect(used).toBeGreaterThan(20_000);
  });
});
