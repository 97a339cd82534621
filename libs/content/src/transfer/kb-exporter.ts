import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { KbConfigsService } from '../kb-config/kb-configs.service';
import { resourceBlobPrefix } from '../resources/resources.service';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  RESOURCES_PER_PART,
  blobEntryName,
  parseEntryName,
  partEntryName,
  type ArchiveField,
  type ArchiveResource,
} from './archive-format';
import { ArchiveWriter } from './archive-writer';

/** A part is written once it holds this many bytes of lines, even with fewer than RESOURCES_PER_PART resources. */
const PART_BYTES = 32 * 1024 ** 2;
/** Processing results kept next to a field (`extracted/<seqid>.json`): the field row holds the same data. */
const RESULT_BLOB = /\/extracted\/\d+\.json$/;

export interface ExportJob {
  id: string;
  kbid: string;
  blob_key: string;
  params: { kb_config?: Record<string, unknown> };
}

type Row = Record<string, unknown>;
const iso = (v: unknown): string => new Date(v as string).toISOString();

/**
 * Writes a KB's archive (docs/export-format.md) straight into the blob store: configuration,
 * label sets, entities groups, synonyms, saved configurations, then the resources a part at a time, each part followed
 * by the stored files of its resources. Nothing but one part is held in memory.
 */
@Injectable()
export class KbExporter {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly configs: KbConfigsService,
  ) {}

  async count(kbid: string): Promise<number> {
    const [row] = (await this.ds.query(`SELECT count(*)::int AS n FROM content.resources WHERE kbid = $1`, [kbid])) as { n: number }[];
    return row?.n ?? 0;
  }

  /** Writes the archive; `progress` is told the resources written so far. Returns the archive's size. */
  async write(job: ExportJob, progress: (processed: number) => Promise<void>, signal: AbortSignal): Promise<number> {
    const w = new ArchiveWriter();
    const stored = this.blobs.put(job.blob_key, w.output, { contentType: 'application/gzip' });
    // A store that fails stops the writer too (its entries would otherwise wait on a reader forever).
    stored.catch((err: Error) => w.abort(err));
    try {
      await this.entries(job, w, progress, signal);
      w.finalize();
    } catch (err) {
      w.abort(err as Error);
      await stored.catch(() => undefined);
      throw err;
    }
    return (await stored).size;
  }

  private async entries(
    job: ExportJob,
    w: ArchiveWriter,
    progress: (processed: number) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    const { kbid } = job;
    const config = job.params.kb_config ?? {};
    await w.addJson('manifest.json', {
      format: ARCHIVE_FORMAT,
      version: ARCHIVE_VERSION,
      exported_at: new Date().toISOString(),
      source: { kbid, ...(typeof config['slug'] === 'string' ? { slug: config['slug'] } : {}) },
    });
    await w.addJson('kb.json', config);
    const labelsets = (await this.ds.query(`SELECT id, body FROM content.labelsets WHERE kbid = $1 ORDER BY id`, [kbid])) as Row[];
    await w.addLines('labelsets.jsonl', labelsets);
    const groups = (await this.ds.query(
      `SELECT id, title, color, custom, entities, deleted_entities, deleted FROM content.entities_groups WHERE kbid = $1 ORDER BY id`,
      [kbid],
    )) as Row[];
    await w.addLines('entities-groups.jsonl', groups);
    const [synonyms] = (await this.ds.query(`SELECT synonyms FROM content.kb_synonyms WHERE kbid = $1`, [kbid])) as {
      synonyms: Record<string, string[]>;
    }[];
    await w.addJson('synonyms.json', { synonyms: synonyms?.synonyms ?? {} });
    // Search configurations, key-value schemas, split and extract strategies: fields name strategies by id.
    await w.addLines('kb-configs.jsonl', await this.configs.exportAll(kbid));

    let after: { created: string; id: string } | undefined;
    let part = 0;
    let resources = 0;
    let blobs = 0;
    for (;;) {
      if (signal.aborted) throw new Error('the service is stopping');
      const rows = (await this.ds.query(
        `SELECT id, slug, title, summary, icon, thumbnail, metadata, usermetadata, fieldmetadata, computedmetadata, origin, extra, relations, access_groups, hidden, status,
                created_at, modified_at, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS cursor
           FROM content.resources WHERE kbid = $1 AND ($2::timestamp IS NULL OR (created_at AT TIME ZONE 'UTC', id) > ($2::timestamp, $3::uuid))
          ORDER BY created_at, id LIMIT ${RESOURCES_PER_PART}`,
        [kbid, after?.created ?? null, after?.id ?? null],
      )) as Row[];
      if (rows.length === 0) break;
      const last = rows[rows.length - 1] as Row;
      after = { created: String(last['cursor']), id: String(last['id']) };
      const fields = (await this.ds.query(
        `SELECT rid, field_type, field_id, value, extracted, status, error, errors, modified_at FROM content.fields WHERE rid = ANY($1::uuid[]) ORDER BY rid, field_type, field_id`,
        [rows.map((r) => r['id'])],
      )) as Row[];
      // Lines are written in parts of bounded size; each part's files follow it.
      let lines: ArchiveResource[] = [];
      let bytes = 0;
      const flush = async () => {
        if (lines.length === 0) return;
        await w.addLines(partEntryName(++part), lines);
        for (const r of lines) blobs += await this.addBlobs(w, kbid, r.rid);
        resources += lines.length;
        lines = [];
        bytes = 0;
        await progress(resources);
      };
      for (const r of rows) {
        const line = resourceLine(
          r,
          fields.filter((f) => f['rid'] === r['id']),
        );
        lines.push(line);
        bytes += JSON.stringify(line).length;
        if (bytes >= PART_BYTES) await flush();
      }
      await flush();
    }
    await w.addJson('end.json', { resources, blobs });
  }

  /** The stored files of one resource (originals, thumbnails, attachments), each as `blobs/<rid>/<path>`. */
  private async addBlobs(w: ArchiveWriter, kbid: string, rid: string): Promise<number> {
    const prefix = resourceBlobPrefix(kbid, rid);
    let n = 0;
    for await (const item of this.blobs.list(prefix)) {
      const path = item.key.slice(prefix.length);
      if (RESULT_BLOB.test(`/${path}`) || !parseEntryName(blobEntryName(rid, path))) continue;
      const got = await this.blobs.get(item.key);
      await w.addStream(blobEntryName(rid, path), got.stat.size, got.body);
      n++;
    }
    return n;
  }
}

function resourceLine(r: Row, fields: Row[]): ArchiveResource {
  return {
    rid: String(r['id']),
    slug: String(r['slug']),
    title: String(r['title']),
    summary: String(r['summary']),
    icon: String(r['icon']),
    thumbnail: String(r['thumbnail']),
    metadata: r['metadata'] as Row,
    usermetadata: r['usermetadata'] as Row,
    fieldmetadata: r['fieldmetadata'] as Row[],
    computedmetadata: r['computedmetadata'] as Row,
    origin: r['origin'] as Row,
    extra: r['extra'] as Row,
    relations: r['relations'] as Row[],
    access_groups: r['access_groups'] as string[],
    hidden: Boolean(r['hidden']),
    status: r['status'] as ArchiveResource['status'],
    created_at: iso(r['created_at']),
    modified_at: iso(r['modified_at']),
    fields: fields.map((f): ArchiveField => ({
      field_type: f['field_type'] as ArchiveField['field_type'],
      field_id: String(f['field_id']),
      value: f['value'] as Row,
      extracted: (f['extracted'] as Row | null) ?? null,
      status: f['status'] as ArchiveField['status'],
      error: (f['error'] as Row | null) ?? null,
      errors: (f['errors'] as Row[]) ?? [],
      modified_at: iso(f['modified_at']),
    })),
  };
}
