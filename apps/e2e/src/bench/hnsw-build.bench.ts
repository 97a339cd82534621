import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import type { ExtractedFieldData } from '@kb/contracts';
// A micro-benchmark of the content service's own index write, run by hand: it needs that code, not the API.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { CONTENT_ENTITIES, CONTENT_MIGRATIONS, SearchIndexerService, hnswIndexName } from '@kb/content';
import { closeServiceDataSource, createServiceDataSource } from '@kb/platform/database';
import { hashedEmbedding } from '@kb/platform/testing';
import { percentile } from './ir-metrics';
import { numberArg } from './retrieval.bench';
import { queries, resourceParagraphs } from './synthetic-text';

/**
 * What the vector index costs the write path on the embedded database, and what its parameters
 * buy back in recall. Each variant indexes the same synthetic paragraphs (the scale benchmark's
 * text and hashed 384-d vectors) through the service's own SearchIndexerService — the one
 * statement that writes paragraphs, postings, term statistics and vectors — into a fresh PGlite
 * with the content schema, then measures recall@k of the HNSW index against an exact scan
 * (tie-aware: a hit counts when its score reaches the exact k-th score) with pgvector's iterative
 * scan, as the SQL semantic path queries it.
 *
 *   npm run bench -- hnsw-build [--paragraphs 20000] [--per-resource 20] [--dimensions 384]
 *     [--variants m16-ef100,m16-ef64,m8-ef64,none] [--queries 100] [--k 20]
 *
 * `m16-ef100` is what the service creates (`ensureHnsw`); a variant creates its index under the
 * same name before the first write, so the service's `CREATE INDEX IF NOT EXISTS` keeps it;
 * `none` puts a placeholder (an empty partial B-tree) under that name: no vector index at all.
 */

const VECTORSET = 'bench';

interface Variant {
  name: string;
  m?: number;
  efConstruction?: number;
}

interface VariantResult {
  variant: string;
  build_s: number;
  paragraphs_per_s: number;
  /** Milliseconds per resource over the last tenth of the build (the cost at the final size). */
  last_ms_per_resource: number;
  recall: Record<string, number>;
  query_p50_ms: Record<string, number>;
}

function parseVariant(s: string): Variant {
  if (s === 'none') return { name: s };
  const m = /^m(\d+)-ef(\d+)$/.exec(s);
  if (!m) throw new Error(`--variants: ${JSON.stringify(s)} is neither none nor m<M>-ef<ef_construction>`);
  return { name: s, m: Number(m[1]), efConstruction: Number(m[2]) };
}

function resourceId(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

function extractedOf(paragraphs: string[], dimensions: number): ExtractedFieldData {
  const text = paragraphs.join('\n\n');
  const meta: { start: number; end: number }[] = [];
  let at = 0;
  for (const p of paragraphs) {
    meta.push({ start: at, end: at + p.length });
    at += p.length + 2;
  }
  return {
    text: { text },
    metadata: { metadata: { language: 'en', paragraphs: meta } },
    vectors: {
      vectorset: VECTORSET,
      similarity: 'COSINE',
      vectors: {
        vectors: meta.map((x, i) => ({
          start: x.start,
          end: x.end,
          start_paragraph: x.start,
          end_paragraph: x.end,
          vector: hashedEmbedding(paragraphs[i] as string, dimensions),
        })),
      },
      split_vectors: {},
      deleted_splits: [],
    },
  } as unknown as ExtractedFieldData;
}

async function runVariant(
  v: Variant,
  o: { paragraphs: number; per: number; dimensions: number; queries: string[]; k: number },
): Promise<VariantResult> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-hnsw-'));
  const ds: DataSource = await createServiceDataSource({
    service: 'content',
    schema: 'content',
    dataDir: dir,
    entities: CONTENT_ENTITIES,
    migrations: CONTENT_MIGRATIONS,
    runMigrations: true,
  });
  try {
    const kbid = '00000000-0000-4000-8000-0000000000aa';
    const name = hnswIndexName(VECTORSET, o.dimensions);
    const where = `WHERE vectorset = '${VECTORSET}' AND dimension = ${o.dimensions}`;
    await ds.query(
      v.m === undefined
        ? `CREATE INDEX ${name} ON content.search_vectors (paragraph) WHERE false`
        : `CREATE INDEX ${name} ON content.search_vectors USING hnsw ((vector::vector(${o.dimensions})) vector_cosine_ops) WITH (m = ${v.m}, ef_construction = ${v.efConstruction}) ${where}`,
    );
    const indexer = new SearchIndexerService();
    const resources = Math.ceil(o.paragraphs / o.per);
    const exact = new Float32Array(resources * o.per * o.dimensions);
    const ids: string[] = [];
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < resources; i++) {
      const { paragraphs } = resourceParagraphs(i, o.per);
      const extracted = extractedOf(paragraphs, o.dimensions);
      const rid = resourceId(i);
      const now = new Date();
      const resource = {
        id: rid,
        kbid,
        slug: `doc-${i}`,
        title: '',
        summary: '',
        icon: '',
        thumbnail: '',
        metadata: { language: 'en' },
        usermetadata: { classifications: [{ labelset: 'topic', label: `t${i % 20}` }] },
        fieldmetadata: [],
        computedmetadata: {},
        origin: {},
        extra: {},
        relations: [],
        accessGroups: [],
        hidden: false,
        status: 'PROCESSED',
        createdAt: now,
        modifiedAt: now,
        lastSeqid: 1,
      };
      const t0 = performance.now();
      await ds.transaction(async (m) => {
        await m.query(
          `INSERT INTO content.resources (id, kbid, slug, status, created_at, modified_at, last_seqid) VALUES ($1, $2, $3, 'PROCESSED', now(), now(), 1)`,
          [rid, kbid, `doc-${i}`],
        );
        await indexer.indexField(m, resource as never, { fieldType: 'text', fieldId: 'body' }, extracted);
      });
      times.push(performance.now() - t0);
      const vectors = (extracted.vectors as unknown as { vectors: { vectors: { start: number; end: number; vector: number[] }[] } }).vectors
        .vectors;
      for (const x of vectors) {
        exact.set(x.vector, ids.length * o.dimensions);
        ids.push(`${rid}/t/body/${x.start}-${x.end}`);
      }
      if ((i + 1) % Math.max(1, Math.floor(resources / 10)) === 0) {
        const last = times.slice(-Math.max(1, Math.floor(resources / 10)));
        console.log(
          `  ${v.name}: ${(i + 1) * o.per} paragraphs, ${(last.reduce((a, b) => a + b, 0) / last.length).toFixed(1)} ms a resource lately`,
        );
      }
    }
    const buildS = (performance.now() - started) / 1000;
    const tail = times.slice(-Math.max(1, Math.floor(times.length / 10)));
    await ds.query('VACUUM ANALYZE content.search_vectors');
    const pidOf = new Map(
      (
        (await ds.query(`SELECT id::text AS id, paragraph_id FROM content.search_paragraphs`)) as { id: string; paragraph_id: string }[]
      ).map((r) => [r.id, r.paragraph_id]),
    );

    const recall: Record<string, number> = {};
    const p50: Record<string, number> = {};
    for (const ef of v.m === undefined ? [0] : [40, 100]) {
      let found = 0;
      let wanted = 0;
      const lat: number[] = [];
      for (const q of o.queries) {
        const qv = hashedEmbedding(q, o.dimensions);
        // Exact scores (the vectors are normalised: cosine = dot), the k-th best as the bar.
        const scores = new Float64Array(ids.length);
        for (let j = 0; j < ids.length; j++) {
          let s = 0;
          for (let d = 0; d < o.dimensions; d++) s += (exact[j * o.dimensions + d] as number) * (qv[d] as number);
          scores[j] = s;
        }
        const bar = [...scores].sort((a, b) => b - a)[o.k - 1] ?? -Infinity;
        if (bar <= 0) continue; // no paragraph shares a word with the query: nothing to recall
        const t0 = performance.now();
        const rows = (await ds.transaction(async (m) => {
          if (ef) {
            await m.query(`SET LOCAL hnsw.iterative_scan = relaxed_order`);
            await m.query(`SET LOCAL hnsw.ef_search = ${ef}`);
          }
          return m.query(
            `SELECT paragraph::text AS id, 1 - ((vector::vector(${o.dimensions})) <=> $1::vector(${o.dimensions})) AS score FROM content.search_vectors
              ${where} ORDER BY (vector::vector(${o.dimensions})) <=> $1::vector(${o.dimensions}) LIMIT ${o.k}`,
            [`[${qv.join(',')}]`],
          );
        })) as { id: string; score: number }[];
        lat.push(performance.now() - t0);
        wanted += o.k;
        found += rows.filter((r) => pidOf.has(r.id) && Number(r.score) >= bar - 1e-6).length;
      }
      const key = ef ? `ef_search ${ef}` : 'exact (no index)';
      recall[key] = wanted ? found / wanted : NaN;
      p50[key] = percentile(lat, 50);
    }
    return {
      variant: v.name,
      build_s: Math.round(buildS),
      paragraphs_per_s: Math.round((resources * o.per) / buildS),
      last_ms_per_resource: Math.round(tail.reduce((a, b) => a + b, 0) / tail.length),
      recall,
      query_p50_ms: p50,
    };
  } finally {
    await closeServiceDataSource(ds);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      paragraphs: { type: 'string', default: '20000' },
      'per-resource': { type: 'string', default: '20' },
      dimensions: { type: 'string', default: '384' },
      variants: { type: 'string', default: 'm16-ef100,m16-ef64,m8-ef64,none' },
      queries: { type: 'string', default: '100' },
      k: { type: 'string', default: '20' },
    },
  });
  const o = {
    paragraphs: numberArg('paragraphs', a.paragraphs) ?? 20_000,
    per: numberArg('per-resource', a['per-resource']) ?? 20,
    dimensions: numberArg('dimensions', a.dimensions) ?? 384,
    queries: queries(numberArg('queries', a.queries) ?? 100),
    k: numberArg('k', a.k) ?? 20,
  };
  const variants = String(a.variants)
    .split(',')
    .map((s) => parseVariant(s.trim()));
  const results: VariantResult[] = [];
  for (const v of variants) {
    console.log(`== ${v.name}: ${o.paragraphs} paragraphs of ${o.dimensions}-d vectors ==`);
    results.push(await runVariant(v, o));
  }
  console.log(`\n| variant | build s | paragraphs/s | ms a resource (last tenth) | recall@${o.k} | query p50 ms |`);
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    const rec = Object.entries(r.recall)
      .map(([k, x]) => `${k}: ${x.toFixed(3)}`)
      .join(', ');
    const lat = Object.entries(r.query_p50_ms)
      .map(([k, x]) => `${k}: ${x.toFixed(1)}`)
      .join(', ');
    console.log(`| ${r.variant} | ${r.build_s} | ${r.paragraphs_per_s} | ${r.last_ms_per_resource} | ${rec} | ${lat} |`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
