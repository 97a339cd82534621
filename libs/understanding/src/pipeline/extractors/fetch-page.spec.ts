import { OutboundHttp } from '@kb/platform/net';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchPage } from './fetch-page';

/** The tests' servers are on loopback: this client's policy names it (as OUTBOUND_ALLOW_CIDRS would). */
const local = new OutboundHttp({ policy: { allowCidrs: ['127.0.0.1'] } });
afterAll(() => Promise.all([local.close()]));

/** An MP3 as far as the signature goes (ID3 header), then filler. */
const recording = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.alloc(300_000, 7)]);

describe('fetchPage: recordings behind links are streamed, not held in memory', () => {
  let server: Server;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-fetch-media-'));
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/memo.mp3' || url === '/download?id=7') {
        res.writeHead(200, { 'content-type': url === '/memo.mp3' ? 'audio/mpeg' : 'application/octet-stream' });
        res.end(recording);
      } else if (url === '/slow.mp3') {
        // Longer than the page timeout of the test, but never idle for long.
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        let i = 0;
        const step = () => {
          if (i * 50_000 >= recording.length) return void res.end();
          res.write(recording.subarray(i * 50_000, (i + 1) * 50_000));
          i++;
          setTimeout(step, 100);
        };
        step();
      } else if (url === '/stalls.mp3') {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        res.write(recording.subarray(0, 8192));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('recognises a recording (by its bytes, whatever the declared type) and spools it to disk with its MD5', async () => {
    for (const path of ['/memo.mp3', '/download?id=7']) {
      // The page limit (maxBytes) is not the recording's: spool takes its own.
      const page = await fetchPage(`${base}${path}`, { http: local, maxBytes: 1000, media: {} });
      if (page.kind !== 'media') throw new Error(`expected media, got ${page.kind}`);
      expect(page.type).toBe('audio/mpeg');
      const file = join(dir, 'out.mp3');
      const md5 = await page.spool(file, 10_000_000);
      expect(md5).toBe(createHash('md5').update(recording).digest('hex'));
      expect(readFileSync(file).equals(recording)).toBe(true);
      await expect(page.spool(file, 10_000_000)).rejects.toThrow(/already used/);
    }
  });

  it('keeps a slow download going past the page timeout while bytes keep coming', async () => {
    const page = await fetchPage(`${base}/slow.mp3`, { http: local, timeoutMs: 250, media: { idleMs: 2_000 } });
    if (page.kind !== 'media') throw new Error('expected media');
    const md5 = await page.spool(join(dir, 'slow.mp3'), 10_000_000);
    expect(md5).toBe(createHash('md5').update(recording).digest('hex'));
  });

  it('gives up on a download that stalls, and refuses one above the size limit', async () => {
    const stalled = await fetchPage(`${base}/stalls.mp3`, { http: local, media: { idleMs: 200 } });
    if (stalled.kind !== 'media') throw new Error('expected media');
    await expect(stalled.spool(join(dir, 'stalled.mp3'), 10_000_000)).rejects.toMatchObject({
      code: 'FETCH_FAILED',
      message: expect.stringContaining('no data for 200 ms'),
    });
    const big = await fetchPage(`${base}/memo.mp3`, { http: local, media: {} });
    if (big.kind !== 'media') throw new Error('expected media');
    await expect(big.spool(join(dir, 'big.mp3'), 100_000)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });

  it('reads a recording into memory when the caller does not take media, and lets an unwanted body go', async () => {
    const page = await fetchPage(`${base}/memo.mp3`, { http: local });
    expect(page.kind === 'file' && page.data.equals(recording)).toBe(true);
    const unwanted = await fetchPage(`${base}/memo.mp3`, { http: local, media: {} });
    if (unwanted.kind !== 'media') throw new Error('expected media');
    await unwanted.discard();
    await expect(unwanted.spool(join(dir, 'x.mp3'), 10_000_000)).rejects.toThrow(/already used/);
  });
});
