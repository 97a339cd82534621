import { collectIssues } from '../../common/validation';
import { ASK_IMAGE_LIMITS, decodedLength, ragImagesStrategiesOf } from './ask-images.dto';
import { AskRequest } from './ask.dto';

const found = (body: Record<string, unknown>) =>
  collectIssues(AskRequest, { query: 'what is shown?', ...body }, { loc: ['body'] }).issues.map((i) => [i.loc.join('.'), i.type]);

const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A base64 image of `type` padded to `bytes` decoded bytes (only its first bytes are looked at). */
const image = (type: string, bytes = 64) => {
  const head =
    type === 'image/png'
      ? PNG_HEAD
      : type === 'image/jpeg'
        ? Buffer.from([0xff, 0xd8, 0xff, 0xe0])
        : type === 'image/gif'
          ? Buffer.from('GIF89a')
          : Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBP')]);
  return { content_type: type, b64encoded: Buffer.concat([head, Buffer.alloc(bytes - head.length)]).toString('base64') };
};

describe('AskRequest images', () => {
  it('accepts every allowed type in extra_context_images and query_image, and the three image strategies', () => {
    expect(
      found({
        extra_context_images: [image('image/png'), image('image/jpeg'), image('image/webp'), image('image/gif')],
        query_image: image('image/png'),
        rag_images_strategies: [
          { name: 'page_image', count: ASK_IMAGE_LIMITS.maxPageImages },
          { name: 'tables' },
          { name: 'paragraph_image' },
        ],
      }),
    ).toEqual([]);
    expect(found({ query_image: null, rag_images_strategies: [{ name: 'page_image', count: null }] })).toEqual([]);
  });

  it('refuses other types, bad base64, bytes that are not the named type and extra members, each at its location', () => {
    expect(
      found({
        extra_context_images: [
          { content_type: 'image/svg+xml', b64encoded: image('image/png').b64encoded },
          { content_type: 'image/png', b64encoded: 'data:image/png;base64,AAAA' },
          { content_type: 'image/jpeg', b64encoded: image('image/png').b64encoded },
          'not an image',
        ],
        query_image: { ...image('image/gif'), url: 'http://x' },
      }),
    ).toEqual([
      ['body.query_image.url', 'extra_forbidden'],
      ['body.extra_context_images.0.content_type', 'enum'],
      ['body.extra_context_images.1.b64encoded', 'base64_decode'],
      ['body.extra_context_images.2.b64encoded', 'value_error'],
      ['body.extra_context_images.3', 'model_type'],
    ]);
    expect(found({ query_image: { content_type: 'image/png' } })).toEqual([['body.query_image.b64encoded', 'string_type']]);
  });

  it('bounds the bytes of one image, of all images with query_image, and the number of images', () => {
    const max = ASK_IMAGE_LIMITS.maxImageBytes;
    expect(found({ query_image: image('image/png', max) })).toEqual([]);
    expect(found({ query_image: image('image/png', max + 1) })).toEqual([['body.query_image.b64encoded', 'too_long']]);
    expect(found({ extra_context_images: [image('image/png', max + 3)] })).toEqual([
      ['body.extra_context_images.0.b64encoded', 'too_long'],
    ]);
    const half = Math.floor(ASK_IMAGE_LIMITS.maxTotalBytes / 2);
    expect(found({ extra_context_images: [image('image/png', half)], query_image: image('image/png', half) })).toEqual([]);
    expect(found({ extra_context_images: [image('image/png', half)], query_image: image('image/png', half + 1) })).toEqual([
      ['body.extra_context_images', 'too_long'],
    ]);
    const many = Array.from({ length: ASK_IMAGE_LIMITS.maxExtraImages + 1 }, () => image('image/gif'));
    expect(found({ extra_context_images: many })).toEqual([['body.extra_context_images', 'too_long']]);
    expect(found({ extra_context_images: image('image/gif') })).toEqual([['body.extra_context_images', 'list_type']]);
  });

  it('refuses unknown, repeated and malformed image strategies', () => {
    expect(
      found({
        rag_images_strategies: [
          { name: 'page_image', count: 0 },
          { name: 'page_image', count: ASK_IMAGE_LIMITS.maxPageImages + 1 },
          { name: 'videos' },
          { name: 'tables', count: 2 },
          { name: 'paragraph_image', count: 1.5 },
        ],
      }),
    ).toEqual([
      ['body.rag_images_strategies.0.count', 'greater_than_equal'],
      ['body.rag_images_strategies.1', 'value_error'],
      ['body.rag_images_strategies.1.count', 'less_than_equal'],
      ['body.rag_images_strategies.2.name', 'union_tag_invalid'],
      ['body.rag_images_strategies.3.count', 'extra_forbidden'],
      ['body.rag_images_strategies.4.count', 'extra_forbidden'],
    ]);
    expect(found({ rag_images_strategies: { name: 'tables' } })).toEqual([['body.rag_images_strategies', 'list_type']]);
  });

  it('reads the strategies with the default page count, and measures decoded base64', () => {
    expect(ragImagesStrategiesOf([{ name: 'page_image' }, { name: 'paragraph_image' }])).toEqual({
      pageImages: ASK_IMAGE_LIMITS.defaultPageImages,
      tables: false,
      paragraphImages: true,
    });
    expect(ragImagesStrategiesOf(undefined)).toEqual({ tables: false, paragraphImages: false });
    expect([decodedLength('QQ=='), decodedLength('QUI='), decodedLength('QUJD')]).toEqual([1, 2, 3]);
  });
});
