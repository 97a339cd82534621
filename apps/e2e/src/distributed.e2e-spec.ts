import { execFileSync } from 'node:child_process';
import { describeJourney } from './journey';
import { startDistributed, startStandalone } from './support/topologies';

describe('journey — distributed (every app its own process over NATS JetStream)', () => {
  describeJourney(startDistributed);
});

describe('a deployment that fails to start', () => {
  /** Processes this test process started that are still running (zombies are already gone). */
  const children = () =>
    execFileSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim() && !/^\s*\d+\s+Z/.test(l) && !l.includes(' ps '));

  it('leaves none of its processes running when one app of several cannot start', async () => {
    // The gateway refuses a setting it cannot read; the other apps start or are starting meanwhile.
    await expect(startDistributed({ gateway: { HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' } })).rejects.toThrow(
      /gateway exited during start[\s\S]*HTTP_KEEP_ALIVE_TIMEOUT_MS/,
    );
    expect(children()).toEqual([]);
  }, 120_000);

  it('leaves no process running when the one standalone process cannot start', async () => {
    await expect(startStandalone({ HTTP_KEEP_ALIVE_TIMEOUT_MS: 'soon' })).rejects.toThrow(/standalone exited during start/);
    expect(children()).toEqual([]);
  }, 60_000);
});
