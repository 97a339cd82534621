import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { bufferedDestination, createLogger } from './logger';

describe('createLogger', () => {
  it('writes JSON lines with the service name and never a credential', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ service: 'gateway', destination });
    logger.info({ headers: { authorization: 'Bearer abc', 'x-svc-serviceaccount': 'Bearer key', accept: 'json' }, token: 't0k' }, 'hello');
    const line = JSON.parse(lines[0] ?? '{}');
    expect(line).toMatchObject({ service: 'gateway', level: 'info', msg: 'hello' });
    expect(lines[0]).not.toContain('abc');
    expect(lines[0]).not.toContain('Bearer key');
    expect(lines[0]).not.toContain('t0k');
    expect(line.headers.accept).toBe('json');
  });

  it('buffers lines off the request path and writes them all, on the timer or at a flush', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-log-'));
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const dest = bufferedDestination(fd, 50);
      const logger = createLogger({ service: 'gateway', destination: dest });
      for (let i = 0; i < 3; i++) logger.info({ i }, 'request');
      expect(readFileSync(file, 'utf8')).toBe(''); // not written by the call that logged it
      await new Promise((r) => setTimeout(r, 300)); // the timer writes a partial chunk
      expect(
        readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).i),
      ).toEqual([0, 1, 2]);
      for (let i = 3; i < 200; i++) logger.info({ i }, 'request');
      dest.flushSync();
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(200);
      await new Promise((resolve) => {
        dest.once('close', resolve);
        dest.end(); // closes the descriptor and stops the timer
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never flushes a stream that is closing (the periodic flush stops when the stream is destroyed)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-log-'));
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      for (let round = 0; round < 20; round++) {
        const fd = openSync(join(dir, `out-${round}.log`), 'w');
        const dest = bufferedDestination(fd, 1); // a flush every millisecond, racing the close
        createLogger({ service: 'gateway', destination: dest }).info({ round }, 'line');
        await new Promise((r) => setTimeout(r, 3));
        await new Promise((resolve) => {
          dest.once('close', resolve);
          dest.end();
        });
        await new Promise((r) => setTimeout(r, 3)); // a timer that outlived the stream would fire here
      }
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
