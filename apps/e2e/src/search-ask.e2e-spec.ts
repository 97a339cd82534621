import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startFakeEmbeddingServer,
  startFakeLlmServer,
  startFakeTranscriptionServer,
  writeTinyCrossEncoder,
  writeTinyOnnxModel,
  type FakeEmbeddingServer,
  type FakeLlmServer,
} from '@kb/platform/testing';
import { apiKey, bearer, type Credential } from './support/http-client';
import { startStandalone, type Topology } from './support/topologies';

interface FindBody {
  best_matches: string[];
  resources: Record<string, { title?: string }>;
}

/**
 * Search and /ask over HTTP on the standalone service, with the knowledge box's models served by
 * local servers speaking the providers' real protocols: an OpenAI-compatible embeddings server as
 * the KB's semantic model (one setting away from a strong embedder), and an OpenAI-compatible chat
 * server as the generative model, streamed to the client as NDJSON.
 */
describe('search and ask through the gateway (standalone)', () => {
  let topology: Topology;
  let embeddings: FakeEmbeddingServer;
  let llm: FakeLlmServer;
  let manager: Credential;
  /** The bootstrap user (owner of both KBs). */
  let owner: Credential;
  let semanticKb: string;
  let generativeKb: string;
  /** EMBEDDING_MODEL_DIR of the service: one local ONNX model folder, `topics` (semantic model `local:topics`). */
  let modelDir: string;

  const texts = [
    ['Ocean tides', 'The moon pulls the oceans and causes the tides. Spring tides happen at full moon.'],
    ['Volcanoes', 'A volcano erupts when magma rises to the surface and lava flows out.'],
    ['Bread baking', 'Yeast ferments the dough so the bread rises in a warm oven.'],
  ] as const;

  beforeAll(async () => {
    embeddings = await startFakeEmbeddingServer(64);
    llm = await startFakeLlmServer();
    modelDir = mkdtempSync(join(tmpdir(), 'kb-e2e-models-'));
    writeTinyOnnxModel(join(modelDir, 'topics'), {
      topics: {
        animals: ['cats', 'dogs', 'kitten', 'puppy', 'pets'],
        vehicles: ['car', 'engine', 'brakes', 'truck'],
        weather: ['rain', 'storm', 'clouds', 'thunder'],
      },
    });
    // RERANKER_MODEL_DIR: a tiny cross-encoder that finds passages about bread relevant, whatever the query.
    writeTinyCrossEncoder(join(modelDir, 'reranker'), { weights: { bread: 4, yeast: 1, oven: 1, lava: 0.5 } });
    topology = await startStandalone({ EMBEDDING_MODEL_DIR: modelDir, RERANKER_MODEL_DIR: join(modelDir, 'reranker') });
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const createKb = async (slug: string, learning_configuration: Record<string, unknown>) => {
      const res = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
        credential: pat,
        body: { slug, title: slug, learning_configuration },
      });
      expect(res.status).toBe(201);
      return (res.body.uuid ?? res.body.id) as string;
    };
    semanticKb = await createKb('semantic-kb', {
      semantic_models: ['hf_embedding'],
      default_semantic_model: 'hf_embedding',
      user_keys: { openai_compatible: { url: embeddings.url, key: 'sk-embed', model: 'toy-embed', size: 64 } },
    });
    generativeKb = await createKb('generative-kb', {
      generative_model: 'chatgpt-4o-mini',
      user_keys: { openai: { url: llm.openAiUrl, key: 'sk-chat', timeout_ms: 5000 } },
    });
    // An API key of the semantic KB (temporal keys are minted from one).
    const sa = await topology.http.call<{ id: string }>('POST', `/api/v1/account/${boot.account.id}/kb/${semanticKb}/service_accounts`, {
      credential: pat,
      body: { title: 'bench', role: 'SOWNER' },
    });
    const key = await topology.http.call<{ token: string }>(
      'POST',
      `/api/v1/account/${boot.account.id}/kb/${semanticKb}/service_account/${sa.body.id}/keys`,
      {
        credential: pat,
        body: { expires: new Date(Date.now() + 86_400_000).toISOString() },
      },
    );
    manager = apiKey(key.body.token);
    owner = pat;
    for (const kb of [semanticKb, generativeKb]) {
      for (const [title, body] of texts) {
        const res = await topology.http.call('POST', `/api/v1/kb/${kb}/resources`, {
          credential: pat,
          body: { title, texts: { body: { body } } },
        });
        expect(res.status).toBe(201);
      }
      await topology.http.eventually(
        async () => {
          const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
            credential: pat,
          });
          return list.body.resources.length === texts.length && list.body.resources.every((r) => r.metadata.status === 'PROCESSED')
            ? true
            : undefined;
        },
        90_000,
        'every resource processed',
      );
    }
    // The generative KB's processed fields get question/answer pairs from the fake provider: let
    // those calls finish before the /ask tests script the provider's answers.
    await topology.http.eventually(
      async () =>
        llm.requests.filter((r) => JSON.stringify(r.body).includes('question and answer pairs')).length >= texts.length ? true : undefined,
      30_000,
      'question/answer calls',
    );
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
    await embeddings?.close();
    await llm?.close();
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  }, 60_000);

  it('runs a KB semantic model from a local ONNX model folder (EMBEDDING_MODEL_DIR), for paragraphs and queries', async () => {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const createKb = async (slug: string, model: string) => {
      const r = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
        credential: pat,
        body: { slug, title: slug, learning_configuration: { semantic_models: [model], default_semantic_model: model } },
      });
      expect(r.status).toBe(201);
      return (r.body.uuid ?? r.body.id) as string;
    };
    const kb = await createKb('local-model-kb', 'local:topics');
    const config = await topology.http.call<Record<string, unknown>>('GET', `/api/v1/kb/${kb}/configuration`, { credential: pat });
    expect(config.body).toMatchObject({ semantic_model: 'local:topics', semantic_vector_similarity: 'COSINE' });
    const ids: Record<string, string> = {};
    for (const [title, body] of [
      ['Pets', 'Our cats and dogs are pets.'],
      ['Garage', 'The car engine and the brakes of the truck.'],
      ['Weather', 'Rain and thunder from storm clouds.'],
    ]) {
      const r = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
        body: { title, texts: { body: { body } } },
      });
      ids[title as string] = r.body.uuid;
    }
    type Extracted = { vectors?: { vectorset: string; dimension?: number } };
    const pets = await topology.http.eventually(
      async () => {
        const r = await topology.http.call<{ metadata: { status: string }; data: { texts: { body: { extracted?: Extracted } } } }>(
          'GET',
          `/api/v1/kb/${kb}/resource/${ids['Pets']}?show=basic&show=extracted&extracted=vectors`,
          { credential: pat },
        );
        return r.body.metadata?.status === 'PROCESSED' ? r.body.data.texts.body.extracted : undefined;
      },
      60_000,
      'processed with the local model',
    );
    expect(pets?.vectors?.vectorset).toBe('local:topics');
    await topology.http.eventually(
      async () => {
        const list = await topology.http.call<{ resources: { metadata: { status: string } }[] }>('GET', `/api/v1/kb/${kb}/resources`, {
          credential: pat,
        });
        return list.body.resources.every((r) => r.metadata.status === 'PROCESSED') ? true : undefined;
      },
      60_000,
      'every resource processed',
    );
    // No word of the query is in any text: only the model's vectors can find the right one.
    for (const [query, title] of [
      ['kitten puppy', 'Pets'],
      ['storm', 'Weather'],
    ] as const) {
      const r = await topology.http.call<FindBody>('POST', `/api/v1/kb/${kb}/find`, {
        credential: pat,
        body: { query, features: ['semantic'], top_k: 1 },
      });
      expect([query, r.status, r.body.best_matches[0]?.split('/')[0]]).toEqual([query, 200, ids[title]]);
    }

    // A local model the workers have no folder for: the field fails with a clear error, nothing hangs.
    const missing = await createKb('missing-model-kb', 'local:not-installed');
    const r = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${missing}/resources`, {
      credential: pat,
      body: { title: 'Pets', texts: { body: { body: 'cats and dogs' } } },
    });
    const failed = await topology.http.eventually(
      async () => {
        const g = await topology.http.call<{
          metadata: { status: string };
          data: { texts: { body: { error?: { body: string; code_str?: string } } } };
        }>('GET', `/api/v1/kb/${missing}/resource/${r.body.uuid}?show=basic&show=errors`, { credential: pat });
        return g.body.metadata?.status === 'ERROR' ? g.body : undefined;
      },
      60_000,
      'the field failed',
    );
    expect(failed.data.texts.body.error?.body).toMatch(/local model local:not-installed .*does not exist/);
    expect(
      (
        await topology.http.call('POST', `/api/v1/account/${boot.account.id}/kbs`, {
          credential: pat,
          body: { slug: 'bad-local', title: 'bad', learning_configuration: { semantic_models: ['local:../etc'] } },
        })
      ).status,
    ).toBe(422);
  }, 120_000);

  it('answers knowledge-graph queries over HTTP (/graph, /graph/nodes, /graph/relations)', async () => {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const created = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: { slug: 'graph-kb', title: 'graph' },
    });
    const kb = (created.body.uuid ?? created.body.id) as string;
    const res = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: {
        title: 'Lighthouses',
        texts: { body: { body: 'Lighthouses guide ships along the coast.' } },
        usermetadata: {
          relations: [
            {
              relation: 'OTHER',
              label: 'guides',
              from: { type: 'entity', value: 'Lighthouse', group: 'THING' },
              to: { type: 'entity', value: 'Ships', group: 'THING' },
            },
          ],
        },
      },
    });
    expect(res.status).toBe(201);
    // A resource with fields enters the index (title, paragraphs, graph edges) with its first processing result.
    await topology.http.eventually(
      async () => {
        const r = await topology.http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kb}/resource/${res.body.uuid}`, {
          credential: pat,
        });
        return r.body.metadata?.status === 'PROCESSED' ? true : undefined;
      },
      60_000,
      'processed',
    );
    const graph = await topology.http.call<{ paths: unknown[] }>('POST', `/api/v1/kb/${kb}/graph`, {
      credential: manager,
      body: { query: { prop: 'path', source: { value: 'lighthouse' }, relation: { label: 'guides' } } },
    });
    // A key of another KB is refused; this KB's owner gets the path.
    expect(graph.status).toBe(403);
    const own = await topology.http.call<{ paths: unknown[] }>('POST', `/api/v1/kb/${kb}/graph`, {
      credential: pat,
      body: { query: { prop: 'path', source: { value: 'lighthouse' }, relation: { label: 'guides' } } },
    });
    expect([own.status, own.body.paths]).toEqual([
      200,
      [
        {
          source: { value: 'Lighthouse', type: 'entity', group: 'THING' },
          relation: { label: 'guides', type: 'OTHER' },
          destination: { value: 'Ships', type: 'entity', group: 'THING' },
        },
      ],
    ]);
    const nodes = await topology.http.call<{ nodes: unknown[] }>('POST', `/api/v1/kb/${kb}/graph/nodes`, {
      credential: pat,
      body: { query: { prop: 'node', value: 'Shipz', match: 'fuzzy' } },
    });
    expect(nodes.body.nodes).toEqual([{ value: 'Ships', type: 'entity', group: 'THING' }]);
    const relations = await topology.http.call<{ relations: unknown[] }>('POST', `/api/v1/kb/${kb}/graph/relations`, {
      credential: pat,
      body: { query: { prop: 'generated', by: 'user' } },
    });
    expect(relations.body.relations).toEqual([{ label: 'guides', type: 'OTHER' }]);
    const bad = await topology.http.call<{ detail: { loc: string[] }[] }>('POST', `/api/v1/kb/${kb}/graph/nodes`, {
      credential: pat,
      body: { query: { prop: 'relation' } },
    });
    expect([bad.status, bad.body.detail[0]?.loc]).toEqual([422, ['body', 'query']]);
  });

  it("transcribes an uploaded recording with the KB's transcriber: timed TRANSCRIPT paragraphs, searchable", async () => {
    const transcription = await startFakeTranscriptionServer();
    const dir = mkdtempSync(join(tmpdir(), 'kb-e2e-audio-'));
    try {
      execFileSync('ffmpeg', [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:duration=5',
        join(dir, 'memo.mp3'),
      ]);
      const boot = topology.bootstrap();
      const pat = bearer(boot.personal_access_token.token);
      const created = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
        credential: pat,
        body: {
          slug: 'media-kb',
          title: 'media',
          learning_configuration: {
            user_keys: { openai_compatible: { url: transcription.url, key: 'sk-audio', transcription_model: 'whisper-1' } },
          },
        },
      });
      const kb = (created.body.uuid ?? created.body.id) as string;
      const upload = await fetch(`${topology.http.baseUrl}/api/v1/kb/${kb}/upload`, {
        method: 'POST',
        headers: { [pat.header]: pat.value, 'content-type': 'audio/mpeg', 'x-filename': 'memo.mp3' },
        body: readFileSync(join(dir, 'memo.mp3')),
      });
      expect(upload.status).toBe(201);
      const { uuid, field_id: fieldId } = (await upload.json()) as { uuid: string; field_id: string };
      const done = await topology.http.eventually(
        async () => {
          const r = await topology.http.call<{
            metadata: { status: string };
            data: {
              files: Record<
                string,
                {
                  extracted?: {
                    metadata?: { metadata: { paragraphs: { kind: string; start_seconds: number[]; end_seconds: number[] }[] } };
                  };
                  error?: unknown;
                }
              >;
            };
          }>('GET', `/api/v1/kb/${kb}/resource/${uuid}?show=basic&show=extracted&show=errors&extracted=metadata`, { credential: pat });
          return r.body.metadata?.status === 'PROCESSED' || r.body.metadata?.status === 'ERROR' ? r.body : undefined;
        },
        60_000,
        'the recording to be processed',
      );
      expect(done.metadata.status).toBe('PROCESSED');
      const paragraphs = done.data.files[fieldId]?.extracted?.metadata?.metadata.paragraphs ?? [];
      expect(paragraphs).toEqual([expect.objectContaining({ kind: 'TRANSCRIPT', start_seconds: [0], end_seconds: [expect.any(Number)] })]);
      expect(transcription.requests).toEqual([
        expect.objectContaining({ model: 'whisper-1', authorization: 'Bearer sk-audio', sampleRate: 16000, channels: 1 }),
      ]);
      type Position = { start_seconds: number | null; end_seconds: number | null };
      const found = await topology.http.call<{
        resources: Record<string, { fields: Record<string, { paragraphs: Record<string, { position: Position }> }> }>;
      }>('POST', `/api/v1/kb/${kb}/find`, { credential: pat, body: { query: 'part', features: ['keyword'] } });
      expect(Object.keys(found.body.resources)).toEqual([uuid]);
      // Where in the recording the paragraph is said, for a player to seek to.
      const [spoken] = Object.values(found.body.resources[uuid]?.fields[`/f/${fieldId}`]?.paragraphs ?? {});
      expect(spoken?.position).toMatchObject({ start_seconds: 0, end_seconds: paragraphs[0]?.end_seconds[0] });
      const listed = await topology.http.call<{ paragraphs: { results: (Position & { position: Position })[] } }>(
        'POST',
        `/api/v1/kb/${kb}/search`,
        {
          credential: pat,
          body: { query: 'part', features: ['keyword'] },
        },
      );
      expect(listed.body.paragraphs.results[0]).toMatchObject({
        start_seconds: [0],
        end_seconds: [paragraphs[0]?.end_seconds[0]],
        position: { start_seconds: 0 },
      });
    } finally {
      await transcription.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it("writes question/answer pairs for a processed field with the KB's generative provider", async () => {
    const qaLlm = await startFakeLlmServer({
      chunks: [
        '```json\n{"pairs": [{"question": "What do lighthouses warn ships about?", "answer": "Dangerous rocks.", "paragraphs": [2]}]}\n```',
      ],
    });
    try {
      const boot = topology.bootstrap();
      const pat = bearer(boot.personal_access_token.token);
      const created = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
        credential: pat,
        body: {
          slug: 'qa-kb',
          title: 'qa',
          learning_configuration: { generative_model: 'chatgpt-4o-mini', user_keys: { openai: { url: qaLlm.openAiUrl, key: 'sk-qa' } } },
        },
      });
      const kb = (created.body.uuid ?? created.body.id) as string;
      const res = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
        credential: pat,
        body: {
          title: 'Lighthouses',
          texts: { body: { body: 'Lighthouses stand on coasts.\n\nTheir light warns ships about dangerous rocks at night.' } },
        },
      });
      type Qa = {
        question_answers: { question_answer: { question: { text: string; ids_paragraphs: string[] }; answers: { text: string }[] }[] };
      };
      const qa = await topology.http.eventually(
        async () => {
          const r = await topology.http.call<{ data: { texts: { body: { extracted?: { question_answers?: Qa } } } } }>(
            'GET',
            `/api/v1/kb/${kb}/resource/${res.body.uuid}?show=extracted&extracted=question_answers`,
            { credential: pat },
          );
          return r.body.data?.texts?.body?.extracted?.question_answers;
        },
        60_000,
        'question/answer pairs',
      );
      const [pair] = qa.question_answers.question_answer;
      expect(pair?.question.text).toBe('What do lighthouses warn ships about?');
      expect(pair?.answers.map((a) => a.text)).toEqual(['Dangerous rocks.']);
      expect(pair?.question.ids_paragraphs).toEqual([expect.stringMatching(new RegExp(`^${res.body.uuid}/t/body/\\d+-\\d+$`))]);
      // The model saw the field's paragraphs, numbered, with the key it was configured with.
      const sent = qaLlm.requests.find((r) => JSON.stringify(r.body).includes('question and answer pairs'));
      expect(sent?.headers.authorization).toBe('Bearer sk-qa');
      expect(JSON.stringify(sent?.body)).toContain('[2] Their light warns ships');
    } finally {
      await qaLlm.close();
    }
  }, 90_000);

  it('vectorises with every semantic model of a KB, and /find searches the vectorset it names', async () => {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const created = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: {
        slug: 'multi-kb',
        title: 'multi',
        learning_configuration: {
          semantic_models: ['hf_embedding', 'en-use-lite-2024'],
          default_semantic_model: 'hf_embedding',
          user_keys: { openai_compatible: { url: embeddings.url, key: 'sk-embed', model: 'toy-embed', size: 64 } },
        },
      },
    });
    const kb = (created.body.uuid ?? created.body.id) as string;
    const res = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Glaciers', texts: { body: { body: 'Glaciers carve valleys as the ice slowly moves downhill.' } } },
    });
    type Extracted = { vectors?: { vectorset: string }; vectorsets?: Record<string, { vectorset: string; dimension: number }> };
    const extracted = await topology.http.eventually(
      async () => {
        const r = await topology.http.call<{ metadata: { status: string }; data: { texts: { body: { extracted?: Extracted } } } }>(
          'GET',
          `/api/v1/kb/${kb}/resource/${res.body.uuid}?show=basic&show=extracted&extracted=vectors`,
          { credential: pat },
        );
        return r.body.metadata?.status === 'PROCESSED' ? r.body.data.texts.body.extracted : undefined;
      },
      60_000,
      'the resource processed',
    );
    expect(extracted?.vectors?.vectorset).toBe('toy-embed');
    expect(extracted?.vectorsets?.['en-use-lite-2024']).toMatchObject({ vectorset: 'en-use-lite-2024', dimension: 512 });
    const find = (vectorset?: string) =>
      topology.http.call<{ resources: Record<string, unknown>; detail?: unknown }>('POST', `/api/v1/kb/${kb}/find`, {
        credential: pat,
        body: {
          query: 'ice moving down valleys',
          features: ['semantic'],
          min_score: { semantic: -1 },
          ...(vectorset ? { vectorset } : {}),
        },
      });
    for (const vs of [undefined, 'hf_embedding', 'toy-embed', 'en-use-lite-2024']) {
      const r = await find(vs);
      expect([vs, r.status, Object.keys(r.body.resources)]).toEqual([vs, 200, [res.body.uuid]]);
    }
    expect((await find('no-such-model')).status).toBe(422);

    // Download Account Predictive Model File: the built-in model's files, for the KB's account only.
    const download = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${topology.http.baseUrl}/api/v1/download/${kb}/model/${path}`, { headers: { [pat.header]: pat.value, ...headers } });
    const manifest = await topology.http.eventually(
      async () => {
        const r = await download(`en-use-lite-2024/model.json?account_id=${boot.account.id}`);
        return r.status === 200 ? ((await r.json()) as { weightsManifest?: { paths: string[] }[] }) : undefined;
      },
      30_000,
      'the built-in model files',
    );
    const shard = manifest.weightsManifest?.[0]?.paths[0] ?? '';
    expect(shard).toMatch(/^group1-shard1of\d+$/);
    const part = await download(`en-use-lite-2024/${shard}?account_id=${boot.account.id}`, { range: 'bytes=0-9' });
    expect([part.status, (await part.arrayBuffer()).byteLength]).toEqual([206, 10]);
    expect((await download(`hf_embedding/model.json?account_id=${boot.account.id}`)).status).toBe(404);
    expect((await download(`en-use-lite-2024/model.json?account_id=00000000-0000-4000-8000-00000000abcd`)).status).toBe(404);
    expect((await download('en-use-lite-2024/model.json')).status).toBe(422);
  }, 90_000);

  it('adds a semantic model to a KB with content (vectorised in the background) and removes it', async () => {
    const boot = topology.bootstrap();
    const pat = bearer(boot.personal_access_token.token);
    const created = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${boot.account.id}/kbs`, {
      credential: pat,
      body: {
        slug: 'grow-kb',
        title: 'grow',
        learning_configuration: {
          user_keys: { openai_compatible: { url: embeddings.url, key: 'sk-embed', model: 'toy-embed', size: 64 } },
        },
      },
    });
    const kb = (created.body.uuid ?? created.body.id) as string;
    const res = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${kb}/resources`, {
      credential: pat,
      body: { title: 'Deltas', texts: { body: { body: 'Rivers drop sediment where they meet the sea and build deltas.' } } },
    });
    type Extracted = { vectorsets?: Record<string, { vectorset: string }> };
    const extracted = () =>
      topology.http.call<{ metadata: { status: string }; data: { texts: { body: { extracted?: Extracted } } } }>(
        'GET',
        `/api/v1/kb/${kb}/resource/${res.body.uuid}?show=basic&show=extracted&extracted=vectors`,
        { credential: pat },
      );
    await topology.http.eventually(
      async () => ((await extracted()).body.metadata?.status === 'PROCESSED' ? true : undefined),
      60_000,
      'processed',
    );
    const find = (vectorset: string) =>
      topology.http.call<{ resources: Record<string, unknown> }>('POST', `/api/v1/kb/${kb}/find`, {
        credential: pat,
        body: { query: 'sediment deltas', features: ['semantic'], min_score: { semantic: -1 }, vectorset },
      });
    expect((await find('hf_embedding')).status).toBe(422);

    const added = await topology.http.call<{ vectorsets: { id: string; vectorset: string; default: boolean }[] }>(
      'POST',
      `/api/v1/kb/${kb}/vectorsets/hf_embedding`,
      { credential: pat },
    );
    expect(added.status).toBe(201);
    expect(added.body.vectorsets).toEqual([
      { id: 'en-use-lite-2024', vectorset: 'en-use-lite-2024', default: true },
      { id: 'hf_embedding', vectorset: 'toy-embed', default: false },
    ]);
    // The existing resource is processed again and gets the new model's vectors.
    await topology.http.eventually(
      async () => {
        const r = await extracted();
        return r.body.metadata?.status === 'PROCESSED' && r.body.data.texts.body.extracted?.vectorsets?.['toy-embed'] ? true : undefined;
      },
      60_000,
      'the new vectorset computed for existing content',
    );
    expect(Object.keys((await find('hf_embedding')).body.resources)).toEqual([res.body.uuid]);
    expect(Object.keys((await find('en-use-lite-2024')).body.resources)).toEqual([res.body.uuid]);

    // Add A Model To A Kb (account layer) is the same operation; unknown models are refused.
    const again = await topology.http.call('POST', `/api/v1/account/${boot.account.id}/models/${kb}`, {
      credential: pat,
      body: { id: 'hf_embedding' },
    });
    expect([again.status, again.body]).toEqual([200, null]);
    expect((await topology.http.call('POST', `/api/v1/kb/${kb}/vectorsets/no-such-model`, { credential: pat })).status).toBe(422);
    expect((await topology.http.call('POST', `/api/v1/kb/${kb}/vectorsets/text-embedding-3-small`, { credential: pat })).status).toBe(422);

    // The default cannot go; another can, and its vectors go with it.
    expect((await topology.http.call('DELETE', `/api/v1/kb/${kb}/vectorsets/en-use-lite-2024`, { credential: pat })).status).toBe(409);
    expect((await topology.http.call('DELETE', `/api/v1/kb/${kb}/vectorsets/hf_embedding`, { credential: pat })).status).toBe(204);
    expect((await topology.http.call('DELETE', `/api/v1/kb/${kb}/vectorsets/hf_embedding`, { credential: pat })).status).toBe(404);
    const list = await topology.http.call<{ vectorsets: { id: string }[] }>('GET', `/api/v1/kb/${kb}/vectorsets`, { credential: pat });
    expect(list.body.vectorsets.map((v) => v.id)).toEqual(['en-use-lite-2024']);
    await topology.http.eventually(
      async () => ((await extracted()).body.data.texts.body.extracted?.vectorsets?.['toy-embed'] ? undefined : true),
      30_000,
      'the removed vectorset dropped',
    );
    expect((await find('hf_embedding')).status).toBe(422);
  }, 120_000);

  it('answers /find from the KB index in memory, brought up to date at once after a write, a hidden resource and a delete', async () => {
    type Debug = FindBody & { metrics: Record<string, number> | null };
    const find = async (query: string) => {
      const r = await topology.http.call<Debug>('POST', `/api/v1/kb/${semanticKb}/find`, {
        credential: manager,
        body: { query, debug: true, min_score: { semantic: 0.1 } },
      });
      expect(r.status).toBe(200);
      return { rids: Object.keys(r.body.resources), memory: r.body.metrics?.['memory_index'] };
    };
    // The first query starts the index's build; later ones use it.
    await topology.http.eventually(async () => ((await find('tides moon')).memory === 1 ? true : undefined), 30_000, 'index in memory');
    const created = await topology.http.call<{ uuid: string }>('POST', `/api/v1/kb/${semanticKb}/resources`, {
      credential: manager,
      body: { title: 'Lunar lander', texts: { body: { body: 'The lander touched the moon near the crater.' } } },
    });
    expect(created.status).toBe(201);
    const rid = created.body.uuid;
    await topology.http.eventually(
      async () => {
        const r = await topology.http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${semanticKb}/resource/${rid}`, {
          credential: manager,
        });
        return r.body.metadata?.status === 'PROCESSED' ? true : undefined;
      },
      60_000,
      'processed',
    );
    // The index changed: the very next query has it brought up to date from the change log, and
    // answers from memory with the new resource; so after hiding, showing and deleting it.
    let r = await find('lander crater');
    expect(r).toMatchObject({ memory: 1, rids: expect.arrayContaining([rid]) });
    expect(
      (await topology.http.call('PATCH', `/api/v1/kb/${semanticKb}/resource/${rid}`, { credential: manager, body: { hidden: true } }))
        .status,
    ).toBe(200);
    r = await find('lander crater');
    expect(r.memory).toBe(1);
    expect(r.rids).not.toContain(rid);
    expect(
      (await topology.http.call('PATCH', `/api/v1/kb/${semanticKb}/resource/${rid}`, { credential: manager, body: { hidden: false } }))
        .status,
    ).toBe(200);
    expect(await find('lander crater')).toMatchObject({ memory: 1, rids: expect.arrayContaining([rid]) });
    expect((await topology.http.call('DELETE', `/api/v1/kb/${semanticKb}/resource/${rid}`, { credential: manager })).status).toBe(204);
    r = await find('lander crater');
    expect(r.memory).toBe(1);
    expect(r.rids).not.toContain(rid);
  }, 120_000);

  it('embeds paragraphs and queries with the KB semantic model, and finds by meaning', async () => {
    expect(embeddings.requests.some((r) => r.input.some((t) => t.includes('magma')))).toBe(true);
    expect(embeddings.requests.every((r) => r.authorization === 'Bearer sk-embed' && r.model === 'toy-embed')).toBe(true);
    const before = embeddings.requests.length;
    const res = await topology.http.call<FindBody>('POST', `/api/v1/kb/${semanticKb}/find`, {
      credential: manager,
      body: { query: 'magma lava', features: ['semantic'], min_score: { semantic: 0.1 } },
    });
    expect(res.body.best_matches.length).toBeGreaterThan(0);
    expect(res.status).toBe(200);
    expect(embeddings.requests.length).toBe(before + 1);
    const first = res.body.best_matches[0]?.split('/')[0] as string;
    expect(res.body.resources[first]?.title).toBe('Volcanoes');
    const get = await topology.http.call<FindBody>(
      'GET',
      `/api/v1/kb/${semanticKb}/find?query=yeast%20dough&features=semantic&features=keyword&min_score_semantic=0.1`,
      { credential: manager },
    );
    expect(get.status).toBe(200);
    expect(get.body.resources[get.body.best_matches[0]?.split('/')[0] as string]?.title).toBe('Bread baking');
  });

  it('reranks /find with the cross-encoder model of RERANKER_MODEL_DIR when asked, the built-in reranker otherwise', async () => {
    type Ranked = {
      best_matches: string[];
      resources: Record<
        string,
        { title?: string; fields: Record<string, { paragraphs: Record<string, { score: number; score_type: string }> }> }
      >;
    };
    const find = (body: Record<string, unknown>) =>
      topology.http.call<Ranked>('POST', `/api/v1/kb/${generativeKb}/find`, {
        credential: owner,
        body: { query: 'magma rises', features: ['keyword'], top_k: 5, ...body },
      });
    const firstTitle = (r: Ranked) => r.resources[r.best_matches[0]?.split('/')[0] as string]?.title;
    // The query's words are the volcano's: the fused order and the built-in reranker put it first.
    expect(firstTitle((await find({ reranker: 'noop' })).body)).toBe('Volcanoes');
    expect(firstTitle((await find({})).body)).toBe('Volcanoes');
    // The model finds bread relevant: its order wins, and its scores are what the paragraphs report.
    const crossed = await find({ reranker: 'cross-encoder' });
    expect(crossed.status).toBe(200);
    expect(firstTitle(crossed.body)).toBe('Bread baking');
    const paragraphs = Object.values(crossed.body.resources).flatMap((r) =>
      Object.values(r.fields).flatMap((f) => Object.values(f.paragraphs)),
    );
    expect(paragraphs.length).toBeGreaterThan(1);
    expect(paragraphs.every((p) => p.score_type === 'RERANKER' && p.score > 0 && p.score < 1)).toBe(true);
    const get = await topology.http.call<Ranked>(
      'GET',
      `/api/v1/kb/${generativeKb}/find?query=magma%20rises&features=keyword&reranker=cross-encoder`,
      {
        credential: owner,
      },
    );
    expect(get.status).toBe(200);
    expect(firstTitle(get.body)).toBe('Bread baking');
    const bad = await find({ reranker: { name: 'cross_encoder', window: 5 } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("'cross-encoder'");
  });

  it('answers /ask on the semantic KB with citations to retrieved paragraphs (x-synchronous)', async () => {
    const res = await topology.http.call<{
      answer: string;
      status: string;
      citations: Record<string, unknown>;
      retrieval_best_matches: { id: string }[];
      learning_id: string;
    }>('POST', `/api/v1/kb/${semanticKb}/ask`, {
      credential: manager,
      headers: { 'x-synchronous': 'true' },
      body: { query: 'What makes bread rise?' },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.answer).toContain('Yeast ferments the dough');
    const retrieved = new Set(res.body.retrieval_best_matches.map((b) => b.id));
    for (const key of Object.keys(res.body.citations)) expect(retrieved.has(key)).toBe(true);
    expect(res.headers.get('nuclia-learning-id')).toBe(res.body.learning_id);
  });

  it('streams a provider answer as NDJSON items, and takes feedback on it', async () => {
    llm.enqueue({ chunks: ['Yeast ferments ', 'the dough.'], chunkDelayMs: 30 });
    const res = await fetch(`${topology.http.baseUrl}/api/v1/kb/${generativeKb}/ask`, {
      method: 'POST',
      headers: { [owner!.header]: owner!.value, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'Why does bread rise?' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const learningId = res.headers.get('nuclia-learning-id');
    expect(learningId).toBeTruthy();
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { item: { type: string; text?: string; status?: string } });
    const types = lines.map((l) => l.item.type);
    expect(types.slice(0, 2)).toEqual(['answer', 'answer']);
    expect(
      lines
        .filter((l) => l.item.type === 'answer')
        .map((l) => l.item.text)
        .join(''),
    ).toBe('Yeast ferments the dough.');
    expect(lines.find((l) => l.item.type === 'status')?.item.status).toBe('success');
    expect(llm.requests.at(-1)?.headers['authorization']).toBe('Bearer sk-chat');
    const feedback = await topology.http.call('POST', `/api/v1/kb/${generativeKb}/feedback`, {
      credential: owner,
      body: { ident: learningId, good: true, task: 'CHAT' },
    });
    expect(feedback.status).toBe(200);
  });

  it('refuses a bad /ask with 422 before streaming, and lets a temporal key with groups ask only', async () => {
    const bad = await topology.http.call<{ detail: { loc: string[] }[] }>('POST', `/api/v1/kb/${semanticKb}/ask`, {
      credential: manager,
      body: { query: 'x', answer_json_schema: {} },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d) => d.loc.join('.'))).toContain('body.answer_json_schema');
    const temporal = await topology.http.call<{ token: string }>('POST', '/api/v1/service_account_temporal_key', {
      credential: manager,
      body: { ttl: 10, security_groups: ['g1'] },
    });
    const key = apiKey(temporal.body.token);
    const find = await topology.http.call('POST', `/api/v1/kb/${semanticKb}/find`, { credential: key, body: { query: 'bread' } });
    expect(find.status).toBe(403);
    const ask = await topology.http.call<{ status: string }>('POST', `/api/v1/kb/${semanticKb}/ask`, {
      credential: key,
      headers: { 'x-synchronous': 'true' },
      body: { query: 'Why does bread rise?' },
    });
    expect(ask.status).toBe(200);
  });
});
