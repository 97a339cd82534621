import { Readable } from 'node:stream';
import type { DataSource } from 'typeorm';
import { ASK_IMAGE_LIMITS, pushedAttachmentKey } from '@kb/contracts';
import type { BlobStore } from '@kb/platform/storage';
import type { Logger } from '@kb/platform/observability';
import { conversationImages } from './conversation-images';

const KB = 'kb1';
const RID = '11111111-1111-4111-8111-111111111111';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 4, 5]);
const TOKEN = 'a'.repeat(43);

type Row = { rid: string; field_id: string; ident: string; j: number; uri: string | null; size: number | null; payload: string | null };
const inline = (ident: string, j: number, data: Buffer): Row => ({
  rid: RID,
  field_id: 'chat',
  ident,
  j,
  uri: null,
  size: data.toString('base64').length,
  payload: data.toString('base64'),
});
const stored = (ident: string, j: number, key: string): Row => ({
  rid: RID,
  field_id: 'chat',
  ident,
  j,
  uri: `blob:${key}`,
  size: null,
  payload: null,
});

function deps(rows: Row[], blobs: Record<string, Buffer> = {}) {
  const read: string[] = [];
  const ds = { query: async () => rows } as unknown as DataSource;
  const store = {
    stat: async (key: string) => (blobs[key] ? { size: blobs[key].length } : null),
    get: async (key: string) => {
      read.push(key);
      return { body: Readable.from([blobs[key] as Buffer]) };
    },
  } as unknown as BlobStore;
  const logger = { warn: () => undefined } as unknown as Logger;
  return { deps: { ds, blobs: store, logger }, read };
}

const message = (ident: string) => ({ key: `${RID}/c/chat/${ident}/0-10`, rid: RID, field: 'c/chat', split: ident });

describe('conversationImages', () => {
  it('sends the images of the context messages in context then attachment order, typed by their bytes', async () => {
    const { deps: d } = deps([inline('m2', 1, JPEG), inline('m1', 2, PNG), inline('m1', 1, Buffer.from('not an image'))]);
    const images = await conversationImages(d, KB, [message('m1'), message('m2'), { key: 'x', rid: RID, field: 'f/doc', split: '' }]);
    expect(images).toEqual([
      { mediaType: 'image/png', data: PNG.toString('base64'), key: `${RID}/c/chat/m1/0-10/attachments/1` },
      { mediaType: 'image/jpeg', data: JPEG.toString('base64'), key: `${RID}/c/chat/m2/0-10/attachments/0` },
    ]);
  });

  it('stops at maxAttachmentImages and leaves out images past the byte bounds', async () => {
    const many = Array.from({ length: 6 }, (_, i) => inline('m1', i + 1, PNG));
    expect(await conversationImages(deps(many).deps, KB, [message('m1')])).toHaveLength(ASK_IMAGE_LIMITS.maxAttachmentImages);
    // A payload too large to read (the query returned its size only), then two that together pass maxTotalBytes.
    const half = Buffer.concat([PNG, Buffer.alloc(ASK_IMAGE_LIMITS.maxTotalBytes / 2 + 1)]);
    const rows: Row[] = [
      { ...inline('m1', 1, PNG), size: 10_000_000, payload: null },
      inline('m1', 2, half),
      inline('m1', 3, half),
      inline('m1', 4, JPEG),
    ];
    const images = await conversationImages(deps(rows).deps, KB, [message('m1')]);
    expect(images.map((i) => i.key.split('/').pop())).toEqual(['1', '3']);
  });

  it("reads a pushed attachment only from under the field's own attachments prefix, never another key or an address", async () => {
    const own = pushedAttachmentKey(KB, RID, 'chat', TOKEN);
    const other = pushedAttachmentKey('kb2', RID, 'chat', TOKEN);
    const traversal = pushedAttachmentKey(KB, RID, 'chat', `../../../../../../kb2/x`);
    const { deps: d, read } = deps(
      [
        stored('m1', 1, own),
        stored('m1', 2, other),
        stored('m1', 3, traversal),
        { ...stored('m1', 4, ''), uri: 'https://example.com/a.png' },
      ],
      { [own]: PNG, [other]: PNG, [traversal]: PNG },
    );
    const images = await conversationImages(d, KB, [message('m1')]);
    expect(images.map((i) => i.key.split('/').pop())).toEqual(['0']);
    expect(read).toEqual([own]);
  });
});
