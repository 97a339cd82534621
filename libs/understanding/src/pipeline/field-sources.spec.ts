import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@kb/platform/storage';
import { buildPdf } from './extractors/fixtures.testing';
import { storedMedia } from './field-sources';

describe('storedMedia (recordings streamed from the blob store)', () => {
  let root: string;
  let blobs: BlobStore;
  let wav: Buffer;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'kb-field-sources-'));
    blobs = await createBlobStore({
      driver: 'fs',
      root: join(root, 'blobs'),
      signingSecret: 'x'.repeat(32),
      publicBaseUrl: 'http://localhost',
    });
    execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=duration=1', join(root, 'tone.wav')]);
    wav = readFileSync(join(root, 'tone.wav'));
    await blobs.put('k/tone', wav);
    await blobs.put('k/report', buildPdf([{ lines: ['A page.'] }]), { contentType: 'application/pdf' });
    await blobs.put('k/empty', Buffer.alloc(0));
  });
  afterAll(async () => {
    await blobs.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('recognises a stored recording by its first bytes and streams it to disk with its MD5', async () => {
    const media = await storedMedia(blobs, { uri: 'blob:k/tone', filename: 'upload.bin' });
    expect(media).toMatchObject({ type: 'audio/wav', size: wav.length });
    const path = join(root, 'spooled.wav');
    await expect(media?.spool(path, 10 * 1024 * 1024)).resolves.toBe(createHash('md5').update(wav).digest('hex'));
    expect(readFileSync(path).equals(wav)).toBe(true);
    await expect(media?.spool(join(root, 'too-big.wav'), 1000)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });

  it.each([
    ['a document, even declared as audio', { uri: 'blob:k/report', content_type: 'audio/mpeg' }],
    ['an empty blob', { uri: 'blob:k/empty', filename: 'a.mp3' }],
    ['a missing blob', { uri: 'blob:k/gone', filename: 'a.mp3' }],
    ['an inline attachment', { payload: Buffer.from('RIFF\0\0\0\0WAVE').toString('base64'), filename: 'a.wav' }],
    ['an external address', { uri: 'https://example.com/a.mp3' }],
  ])('leaves %s to the ordinary read', async (_what, source) => {
    await expect(storedMedia(blobs, source)).resolves.toBeUndefined();
  });
});
