import sharp from 'sharp';
import { buildPdf, startFakeLlmServer, type FakeLlmRequest, type FakeLlmServer } from '@kb/platform/testing';
import { bearer, type Credential } from './support/http-client';
import { kbAnsweringWith } from './support/kb-fixtures';
import { startStandalone, type Topology } from './support/topologies';

type Item = { type: string; text?: string; status?: string; details?: string };
type Detail = { detail: { loc: (string | number)[]; type: string }[] };

/** A white image with black text lines (OCR reads them), rendered from SVG by sharp. */
async function textImage(lines: string[]): Promise<Buffer> {
  const text = lines
    .map((l, i) => `<text x="30" y="${70 + i * 60}" font-family="DejaVu Sans, sans-serif" font-size="40" fill="#000">${l}</text>`)
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="${60 + lines.length * 60 + 40}"><rect width="100%" height="100%" fill="#fff"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).flatten({ background: '#ffffff' }).png().toBuffer();
}

/**
 * Images in /ask over HTTP on the standalone service: the caller's images (extra_context_images,
 * query_image) reaching an OpenAI-compatible and an Anthropic provider (a local fake that records
 * them), paragraph_image sending the preview of an OCR'd image file, never one the caller's
 * security groups hide, and the refusals (422 at their location; 413 past the body limit).
 */
describe('ask with images through the gateway (standalone)', () => {
  let topology: Topology;
  let llm: FakeLlmServer;
  let pat: Credential;
  let offlineKb: string;
  let openaiKb: string;
  let anthropicKb: string;
  let png: Buffer;
  let jpeg: Buffer;
  let attachmentPng: Buffer;

  beforeAll(async () => {
    llm = await startFakeLlmServer();
    topology = await startStandalone();
    pat = bearer(topology.bootstrap().personal_access_token.token);
    offlineKb = await kbAnsweringWith(topology, pat, 'images-offline', 'offline');
    openaiKb = await kbAnsweringWith(topology, pat, 'images-openai', 'openai', llm);
    anthropicKb = await kbAnsweringWith(topology, pat, 'images-anthropic', 'anthropic', llm);
    png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3060c0' } })
      .png()
      .toBuffer();
    jpeg = await sharp({ create: { width: 30, height: 40, channels: 3, background: '#c03060' } })
      .jpeg()
      .toBuffer();
    attachmentPng = await sharp({ create: { width: 24, height: 24, channels: 3, background: '#208040' } })
      .png()
      .toBuffer();
    const resources: [string, Record<string, unknown>][] = [
      [offlineKb, { title: 'Bread', texts: { body: { body: 'Yeast ferments the dough so the bread rises.' } } }],
      [anthropicKb, { title: 'Bread', texts: { body: { body: 'Yeast ferments the dough so the bread rises.' } } }],
      [openaiKb, { title: 'Bread', texts: { body: { body: 'Yeast ferments the dough so the bread rises.' } } }],
      [
        openaiKb,
        {
          title: 'Harbour photo',
          files: {
            photo: {
              file: {
                filename: 'lighthouse.png',
                content_type: 'image/png',
                payload: (await textImage(['The lighthouse keeper', 'paints the tower red'])).toString('base64'),
              },
            },
          },
        },
      ],
      [
        openaiKb,
        {
          title: 'Harbour report',
          files: {
            report: {
              file: {
                filename: 'report.pdf',
                content_type: 'application/pdf',
                payload: buildPdf([
                  { lines: ['Harbour report, first page.', 'The pier was rebuilt in spring.'] },
                  { lines: ['Second page.', 'The ferry timetable changes in October.'] },
                ]).toString('base64'),
              },
            },
          },
        },
      ],
      [
        openaiKb,
        {
          title: 'Mooring chat',
          conversations: {
            chat: {
              messages: [
                {
                  ident: 'm1',
                  who: 'skipper',
                  content: {
                    text: 'The mooring rope of the trawler is frayed near the bollard, photo attached.',
                    attachments: [
                      { filename: 'rope.png', content_type: 'image/png', payload: attachmentPng.toString('base64') },
                      // Labelled an image, but not one: never sent.
                      { filename: 'notes.png', content_type: 'image/png', payload: Buffer.from('not an image').toString('base64') },
                    ],
                  },
                },
                { ident: 'm2', who: 'harbour master', content: { text: 'Replace the mooring rope before the storm.' } },
              ],
            },
          },
        },
      ],
      [
        openaiKb,
        {
          title: 'Restricted photo',
          security: { access_groups: ['vault-team'] },
          files: {
            scan: {
              file: {
                filename: 'vault.png',
                content_type: 'image/png',
                payload: (await textImage(['The vault combination', 'is seven nine three'])).toString('base64'),
              },
            },
          },
        },
      ],
    ];
    for (const [kb, body] of resources) {
      const created = await topology.http.call('POST', `/api/v1/kb/${kb}/resources`, { credential: pat, body });
      expect(created.status).toBe(201);
    }
    for (const [kb, count] of [
      [offlineKb, 1],
      [anthropicKb, 1],
      [openaiKb, 5],
    ] as const) {
      await topology.http.eventually(
        async () => {
          const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
            credential: pat,
          });
          return list.body.resources.length === count && list.body.resources.every((r) => r.metadata.status === 'PROCESSED')
            ? true
            : undefined;
        },
        120_000,
        'every resource processed',
      );
    }
  }, 300_000);

  afterAll(async () => {
    await topology?.stop();
    await llm?.close();
  }, 60_000);

  const ask = async (kb: string, body: Record<string, unknown>): Promise<Item[]> => {
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/ask`, {
      method: 'POST',
      headers: { [pat!.header]: pat!.value, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.text())
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { item: Item }).item);
  };
  /** The generation call of this question (processing also calls the provider, for question/answer pairs). */
  const generation = (question: string): FakeLlmRequest => {
    const found = llm.requests.filter((r) => JSON.stringify(r.body['messages']).includes(`Question: ${question}`));
    expect(found).toHaveLength(1);
    return found[0] as FakeLlmRequest;
  };
  const refused = async (kb: string, body: Record<string, unknown>) => {
    const res = await topology.http.call<Detail>('POST', `/api/v1/kb/${kb}/ask`, { credential: pat, body });
    expect(res.status).toBe(422);
    return res.body.detail.map((d) => [d.loc.join('.'), d.type]);
  };
  const image = (type: string, bytes: Buffer) => ({ content_type: type, b64encoded: bytes.toString('base64') });

  it.each([
    ['OpenAI-compatible', () => openaiKb],
    ['Anthropic', () => anthropicKb],
  ])('extra_context_images and query_image reach the %s provider, in order, as sent', async (_name, kb) => {
    const question = `Why does the bread rise (${_name})?`;
    const items = await ask(kb(), {
      query: question,
      extra_context_images: [image('image/png', png)],
      query_image: image('image/jpeg', jpeg),
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    expect(generation(question).images).toEqual([
      { mediaType: 'image/png', data: png.toString('base64') },
      { mediaType: 'image/jpeg', data: jpeg.toString('base64') },
    ]);
  });

  it('paragraph_image adds the preview of the image file whose OCR text was found; without the strategy no image is sent', async () => {
    const question = 'What does the lighthouse keeper paint?';
    const items = await ask(openaiKb, { query: question, rag_images_strategies: [{ name: 'paragraph_image' }] });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    const sent = generation(question);
    expect(JSON.stringify(sent.body['messages'])).toMatch(/lighthouse keeper/i);
    expect(sent.images).toHaveLength(1);
    expect(sent.images[0]?.mediaType).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(sent.images[0]?.data ?? '', 'base64')).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(512);

    const plain = 'What colour does the lighthouse keeper paint?';
    await ask(openaiKb, { query: plain });
    expect(generation(plain).images).toEqual([]);
  });

  it('page_image sends the rendered PDF pages of the best paragraphs, at most count; tables adds none (no PDF paragraph is a table)', async () => {
    const question = 'When does the ferry timetable change?';
    const items = await ask(openaiKb, {
      query: question,
      debug: true,
      top_k: 1,
      rag_images_strategies: [{ name: 'page_image', count: 1 }, { name: 'tables' }],
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    const sent = generation(question);
    expect(sent.images).toHaveLength(1);
    expect(sent.images[0]?.mediaType).toBe('image/png');
    const meta = await sharp(Buffer.from(sent.images[0]?.data ?? '', 'base64')).metadata();
    expect(meta.format).toBe('png');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBe(1024);
    const debug = items.find((i) => i.type === 'debug') as unknown as { metadata: { predict_request: { images: string[] } } };
    expect(debug.metadata.predict_request.images).toEqual([expect.stringMatching(/\/f\/report\/.*\/page\/2$/)]);

    const two = 'Harbour report: the pier and the ferry timetable?';
    await ask(openaiKb, { query: two, debug: true, top_k: 5, rag_images_strategies: [{ name: 'page_image', count: 5 }] });
    expect(generation(two).images.length).toBe(2);
    const bounded = 'Harbour report: the pier, and the ferry timetable?';
    await ask(openaiKb, { query: bounded, top_k: 5, rag_images_strategies: [{ name: 'page_image', count: 1 }] });
    expect(generation(bounded).images.length).toBe(1);
    const none = 'When does the ferry timetable change, without pages?';
    await ask(openaiKb, { query: none, top_k: 1, rag_images_strategies: [{ name: 'tables' }] });
    expect(generation(none).images).toEqual([]);
  });

  it('conversation attachments_images sends the images attached to the context messages, not without it', async () => {
    const question = 'Why is the mooring rope of the trawler frayed?';
    const items = await ask(openaiKb, {
      query: question,
      debug: true,
      top_k: 1,
      rag_strategies: [{ name: 'conversation', attachments_images: true, max_messages: 5 }],
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
    const sent = generation(question);
    expect(JSON.stringify(sent.body['messages'])).toMatch(/mooring rope/i);
    // The provider got the attached PNG as an image part, once, as stored; the bytes that are no image were left out.
    expect(sent.images).toEqual([{ mediaType: 'image/png', data: attachmentPng.toString('base64') }]);
    const debug = items.find((i) => i.type === 'debug') as unknown as { metadata: { predict_request: { images: string[] } } };
    expect(debug.metadata.predict_request.images).toEqual([expect.stringMatching(/\/c\/chat\/m1\/.*\/attachments\/0$/)]);

    const without = 'Why is the trawler mooring rope frayed?';
    await ask(openaiKb, { query: without, top_k: 1, rag_strategies: [{ name: 'conversation', max_messages: 5 }] });
    expect(generation(without).images).toEqual([]);
  });

  it('paragraph_image never sends the image of a resource the security groups hide', async () => {
    const hidden = 'What is the vault combination?';
    await ask(openaiKb, {
      query: hidden,
      security: { groups: ['harbour-team'] },
      rag_images_strategies: [{ name: 'paragraph_image' }],
    });
    // Retrieval may find nothing else to answer from (then no provider call at all): no call may carry the image or its text.
    const calls = llm.requests.filter((r) => JSON.stringify(r.body['messages']).includes(`Question: ${hidden}`));
    expect(calls.length).toBeLessThanOrEqual(1);
    for (const call of calls) {
      expect(JSON.stringify(call.body['messages'])).not.toMatch(/seven nine three/i);
      expect(call.images).toEqual([]);
    }
    // The same question by a member of the group gets the image: the test above can fail.
    const member = 'What is the combination of the vault?';
    await ask(openaiKb, {
      query: member,
      security: { groups: ['vault-team'] },
      rag_images_strategies: [{ name: 'paragraph_image' }],
    });
    expect(JSON.stringify(generation(member).body['messages'])).toMatch(/seven nine three/i);
    expect(generation(member).images).toHaveLength(1);
  });

  it('the built-in model refuses images sent by the caller (422) and answers without strategy images', async () => {
    expect(await refused(offlineKb, { query: 'bread?', extra_context_images: [image('image/png', png)] })).toEqual([
      ['body.extra_context_images', 'not_supported'],
    ]);
    expect(await refused(offlineKb, { query: 'bread?', query_image: image('image/png', png) })).toEqual([
      ['body.query_image', 'not_supported'],
    ]);
    const items = await ask(offlineKb, {
      query: 'Why does the bread rise?',
      rag_images_strategies: [{ name: 'paragraph_image' }, { name: 'tables' }],
    });
    expect(items.find((i) => i.type === 'status')?.status).toBe('success');
  });

  it('refuses bad images and strategies with 422 at their location, and a body past the limit with 413', async () => {
    expect(
      await refused(openaiKb, {
        query: 'x',
        extra_context_images: [
          image('image/svg+xml', png),
          image('image/jpeg', png),
          { content_type: 'image/png', b64encoded: 'not base64!' },
        ],
        query_image: image('image/png', Buffer.concat([png, Buffer.alloc(600 * 1024)])),
        rag_images_strategies: [{ name: 'page_image', count: 11 }, { name: 'videos' }],
      }),
    ).toEqual([
      ['body.query_image.b64encoded', 'too_long'],
      ['body.extra_context_images.0.content_type', 'enum'],
      ['body.extra_context_images.1.b64encoded', 'value_error'],
      ['body.extra_context_images.2.b64encoded', 'base64_decode'],
      ['body.rag_images_strategies.0.count', 'less_than_equal'],
      ['body.rag_images_strategies.1.name', 'union_tag_invalid'],
    ]);
    expect(await refused(openaiKb, { query: 'x', extra_context_images: Array.from({ length: 5 }, () => image('image/png', png)) })).toEqual(
      [['body.extra_context_images', 'too_long']],
    );
    // Two images of 330 KiB: each within its bound, together past 640 KiB, and the body still under the 1 MiB edge limit.
    const big = Buffer.concat([png, Buffer.alloc(330 * 1024)]);
    expect(
      await refused(openaiKb, { query: 'x', extra_context_images: [image('image/png', big)], query_image: image('image/png', big) }),
    ).toEqual([['body.extra_context_images', 'too_long']]);
    const huge = await topology.http.call('POST', `/api/v1/kb/${openaiKb}/ask`, {
      credential: pat,
      body: { query: 'x', query_image: image('image/png', Buffer.alloc(1024 * 1024)) },
    });
    expect(huge.status).toBe(413);
  });
});
