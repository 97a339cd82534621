import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { DataSource } from 'typeorm';
import { DomainError, LabelSetDto } from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { checkEntityMap } from '../entities-groups/entity-map';
import {
  KbConfigsService,
  checkArchivedKbConfig,
  kbConfigLimit,
  type ArchivedKbConfig,
  type KbConfigRef,
} from '../kb-config/kb-configs.service';
import { LabelSetsService } from '../labelsets/labelsets.service';
import { resourceBlobPrefix } from '../resources/resources.service';
import { SynonymsService, checkSynonyms } from '../search/synonyms.service';
import { ArchiveError, type ArchiveEntitiesGroup, type ArchiveLimits } from './archive-format';
import {
  checkEnd,
  checkEntitiesGroupLine,
  checkKbConfig,
  checkLabelSetLine,
  checkManifest,
  checkResource,
  parseJson,
} from './archive-lines';
import { entryLines, entryText, readArchive, type ArchiveEntry } from './archive-reader';
import { ImportedResources } from './imported-resources';

export interface ImportJob {
  id: string;
  kbid: string;
  blob_key: string;
  /** Aborted when the service stops: the job is left for the next attempt (which first undoes this one). */
  signal?: AbortSignal;
}

/** The service is stopping: not a failure of the archive. */
export class ImportStopped extends Error {}

const checkStop = (job: ImportJob) => {
  if (job.signal?.aborted) throw new ImportStopped('the service is stopping');
};

/** What the first pass learnt: the archive is whole and valid, and how many resources it holds. */
export interface CheckedArchive {
  sourceKbid: string;
  resources: number;
}

interface KbSettings {
  labelsets: { id: string; body: LabelSetDto }[];
  groups: ArchiveEntitiesGroup[];
  synonyms: Record<string, string[]> | undefined;
}

/**
 * Imports an archive into a KB in two passes over the stored archive: the first reads and checks
 * every entry and line and writes nothing (so a bad archive leaves the KB untouched); the second
 * writes each resource with its fields in one transaction through the repository and the search
 * indexer (index rows rebuilt from the stored extracted data and vectors, as a reindex does) and
 * records it against the import, so a failure part-way removes exactly what this import wrote.
 * A resource keeps its id when it is free in this deployment; otherwise (importing a KB next to
 * the one it came from) it gets an id derived from the target KB and its old id. Slugs are kept.
 */
@Injectable()
export class KbImporter {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly imported: ImportedResources,
    private readonly labelsets: LabelSetsService,
    private readonly synonyms: SynonymsService,
    private readonly configs: KbConfigsService,
  ) {}

  private async open(job: ImportJob, limits: ArchiveLimits): Promise<AsyncGenerator<ArchiveEntry>> {
    const got = await this.blobs.get(job.blob_key);
    return readArchive(got.body, limits);
  }

  /** The manifest and the KB configuration, from the first two entries only. */
  async head(blobKey: string, limits: ArchiveLimits): Promise<{ sourceKbid: string; kb: Record<string, unknown> }> {
    const entries = await this.open({ id: '', kbid: '', blob_key: blobKey }, limits);
    try {
      const first = await entries.next();
      if (first.done) throw new ArchiveError('empty archive');
      const manifest = checkManifest(parseJson(await entryText(first.value), 'manifest.json'));
      const second = await entries.next();
      if (second.done || second.value.path !== 'kb.json') throw new ArchiveError('kb.json must follow manifest.json');
      return {
        sourceKbid: manifest.source.kbid,
        kb: checkKbConfig(parseJson(await entryText(second.value), 'kb.json')) as Record<string, unknown>,
      };
    } finally {
      await entries.return(undefined);
    }
  }

  /** First pass: everything checked, nothing written. Throws ArchiveError on the first problem. */
  async check(job: ImportJob, limits: ArchiveLimits): Promise<CheckedArchive> {
    let sourceKbid = '';
    const rids = new Set<string>();
    const slugs = new Set<string>();
    const blobsPerRid = new Map<string, number>();
    // A resource is written once its files are stored: they follow its part, each resource's
    // together and in the order of the lines (as the export writes them). Position in the part by rid.
    let partRids = new Map<string, number>();
    let blobRid: string | undefined;
    let blobs = 0;
    for await (const entry of await this.open(job, limits)) {
      checkStop(job);
      const name = entry.name;
      if (name.kind !== 'blob') {
        partRids = new Map();
        blobRid = undefined;
      }
      if (name.kind === 'blob') {
        if (name.rid !== blobRid && blobsPerRid.has(name.rid)) throw new ArchiveError(`the files of resource ${name.rid} are not together`);
        const at = partRids.get(name.rid);
        if (at === undefined) throw new ArchiveError(`${entry.path} belongs to no resource of the part before it`);
        if (blobRid !== undefined && at < (partRids.get(blobRid) ?? 0))
          throw new ArchiveError(`the files of resource ${name.rid} come after those of a resource after it`);
        blobRid = name.rid;
        const n = (blobsPerRid.get(name.rid) ?? 0) + 1;
        if (n > limits.maxBlobsPerResource)
          throw new ArchiveError(`resource ${name.rid} has more than ${limits.maxBlobsPerResource} files`);
        blobsPerRid.set(name.rid, n);
        blobs++;
        for await (const chunk of entry.body) void chunk;
      } else if (name.kind === 'resources') {
        const batch: string[] = [];
        for await (const { line, n } of entryLines(entry, limits.maxLineBytes)) {
          const r = checkResource(parseJson(line, `${entry.path} line ${n}`), `${entry.path} line ${n}`, limits);
          if (rids.has(r.rid)) throw new ArchiveError(`resource ${r.rid} appears twice`);
          if (slugs.has(r.slug)) throw new ArchiveError(`slug ${JSON.stringify(r.slug)} appears twice`);
          rids.add(r.rid);
          partRids.set(r.rid, partRids.size);
          slugs.add(r.slug);
          batch.push(r.slug);
          if (rids.size > limits.maxResources) throw new ArchiveError(`the archive holds more than ${limits.maxResources} resources`);
        }
        const taken = (await this.ds.query(`SELECT slug FROM content.resources WHERE kbid = $1 AND slug = ANY($2::text[]) LIMIT 1`, [
          job.kbid,
          batch,
        ])) as { slug: string }[];
        if (taken[0]) throw new ArchiveError(`a resource with slug ${JSON.stringify(taken[0].slug)} already exists in this Knowledge Box`);
      } else if (name.name === 'manifest.json') {
        sourceKbid = checkManifest(parseJson(await entryText(entry), entry.path)).source.kbid;
      } else if (name.name === 'end.json') {
        const end = checkEnd(parseJson(await entryText(entry), entry.path));
        if (end.resources !== rids.size || end.blobs !== blobs)
          throw new ArchiveError(
            `end.json counts ${end.resources} resources and ${end.blobs} files, the archive holds ${rids.size} and ${blobs}`,
          );
      } else if (name.name === 'kb-configs.jsonl') {
        const rows = await this.configsEntry(entry, limits);
        await wrapAsync(() => this.configs.assertRoom(job.kbid, rows), entry.path);
      } else {
        await this.settingsEntry(entry, limits, { labelsets: [], groups: [], synonyms: undefined });
      }
    }
    return { sourceKbid, resources: rids.size };
  }

  /** Second pass: writes. `progress` is told the resources written so far. */
  async write(job: ImportJob, checked: CheckedArchive, limits: ArchiveLimits, progress: (n: number) => Promise<void>): Promise<void> {
    const settings: KbSettings = { labelsets: [], groups: [], synonyms: undefined };
    // Saved configurations are written before the resources (processing reads the strategies
    // their fields name), and the ones this import created are removed again if it fails.
    let createdConfigs: KbConfigRef[] = [];
    try {
      await this.writeEntries(job, checked, limits, progress, settings, (created) => (createdConfigs = created));
    } catch (err) {
      await this.configs.removeImported(job.kbid, createdConfigs);
      throw err;
    }
  }

  private async writeEntries(
    job: ImportJob,
    checked: CheckedArchive,
    limits: ArchiveLimits,
    progress: (n: number) => Promise<void>,
    settings: KbSettings,
    configsCreated: (created: KbConfigRef[]) => void,
  ): Promise<void> {
    const ids = new Map<string, string>();
    let written = 0;
    // Resources staged whose files may still come: written (and metered) once their files are stored.
    let staged = false;
    let blobRid: string | undefined;
    for await (const entry of await this.open(job, limits)) {
      checkStop(job);
      const name = entry.name;
      if (name.kind === 'blob') {
        const rid = ids.get(name.rid);
        if (!rid || !(await this.imported.isStaged(job.id, rid)))
          throw new ArchiveError(`${entry.path} belongs to no resource of the part before it`);
        // The previous resource's files are all stored (the check pass saw each resource's together).
        if (blobRid && blobRid !== rid) await this.imported.writeStaged(job.id, job.kbid, blobRid);
        blobRid = rid;
        const key = `${resourceBlobPrefix(job.kbid, rid)}${name.path}`;
        const put = await this.blobs.put(key, stream(entry), { size: entry.size, maxBytes: limits.maxBlobBytes });
        await this.imported.recordBlob(job.id, rid, key, put.size);
        continue;
      }
      if (staged) {
        await this.imported.writeStaged(job.id, job.kbid);
        staged = false;
        blobRid = undefined;
      }
      if (name.kind === 'resources') {
        for await (const { line, n } of entryLines(entry, limits.maxLineBytes)) {
          checkStop(job);
          const original = parseJson(line, `${entry.path} line ${n}`) as { rid: string; slug: string };
          const oldRid = original.rid;
          const rid = await this.targetRid(job.kbid, oldRid);
          ids.set(oldRid, rid);
          // Ids are rewritten in the text: blob addresses, paragraph keys and vectors all name them.
          let text = line.split(checked.sourceKbid).join(job.kbid);
          if (rid !== oldRid) text = text.split(oldRid).join(rid);
          const resource = checkResource(parseJson(text, `${entry.path} line ${n}`), `${entry.path} line ${n}`, limits);
          // Slugs are kept as they were, even one that was the old id (a resource's default slug).
          await this.imported.stage(job.id, { ...resource, slug: original.slug }, written);
          staged = true;
          written++;
        }
        await progress(written);
      } else if (name.kind === 'fixed' && name.name === 'kb-configs.jsonl') {
        const rows = await this.configsEntry(entry, limits);
        configsCreated(await wrapAsync(() => this.configs.importAll(job.kbid, rows), entry.path));
      } else if (name.kind === 'fixed' && !['manifest.json', 'end.json', 'kb.json'].includes(name.name)) {
        await this.settingsEntry(entry, limits, settings);
      } else {
        for await (const chunk of entry.body) void chunk;
      }
    }
    if (staged) await this.imported.writeStaged(job.id, job.kbid);
    await this.applySettings(job.kbid, settings);
  }

  /** Removes every resource this import wrote or staged, subtracting what the written ones hold (see ImportedResources). */
  undo(importId: string, kbid: string): Promise<void> {
    return this.imported.undo(importId, kbid);
  }

  private async targetRid(kbid: string, rid: string): Promise<string> {
    const [taken] = (await this.ds.query(`SELECT 1 AS x FROM content.resources WHERE id = $1`, [rid])) as unknown[];
    if (!taken) return rid;
    const h = createHash('sha256').update(`${kbid}/${rid}`).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16] as string, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** `kb-configs.jsonl`: each line checked as its route checks it; at most each kind's bound, no id twice. */
  private async configsEntry(entry: ArchiveEntry, limits: ArchiveLimits): Promise<ArchivedKbConfig[]> {
    const rows: ArchivedKbConfig[] = [];
    const seen = new Set<string>();
    for await (const { line, n } of entryLines(entry, limits.maxLineBytes)) {
      const where = `${entry.path} line ${n}`;
      const row = wrap(() => checkArchivedKbConfig(parseJson(line, where)), where);
      const key = `${row.kind}/${row.id}`;
      if (seen.has(key)) throw new ArchiveError(`${where}: ${row.kind} configuration ${row.id} appears twice`);
      seen.add(key);
      if (rows.filter((r) => r.kind === row.kind).length >= kbConfigLimit(row.kind))
        throw new ArchiveError(`${where}: more than ${kbConfigLimit(row.kind)} ${row.kind} configurations`);
      rows.push(row);
    }
    return rows;
  }

  private async settingsEntry(entry: ArchiveEntry, limits: ArchiveLimits, into: KbSettings): Promise<void> {
    if (entry.path === 'synonyms.json') {
      const body = parseJson(await entryText(entry), entry.path);
      into.synonyms = wrap(() => checkSynonyms(body), entry.path);
      return;
    }
    if (entry.path === 'kb.json') {
      checkKbConfig(parseJson(await entryText(entry), entry.path));
      return;
    }
    for await (const { line, n } of entryLines(entry, limits.maxLineBytes)) {
      const where = `${entry.path} line ${n}`;
      if (entry.path === 'labelsets.jsonl') {
        const { id, body } = checkLabelSetLine(parseJson(line, where), where);
        const dto = plainToInstance(LabelSetDto, body);
        const errors = validateSync(dto, { whitelist: true });
        if (errors.length > 0) throw new ArchiveError(`${where}: label set ${id} is invalid (${errors.map((e) => e.property).join(', ')})`);
        into.labelsets.push({ id, body: dto });
        if (into.labelsets.length > limits.maxLabelSets) throw new ArchiveError(`more than ${limits.maxLabelSets} label sets`);
      } else {
        const group = checkEntitiesGroupLine(parseJson(line, where), where);
        const issues: { msg: string }[] = [];
        group.entities = checkEntityMap(group.entities, ['entities'], issues as never) as Record<string, unknown>;
        if (issues.length > 0) throw new ArchiveError(`${where}: ${issues[0]?.msg ?? 'invalid entities'}`);
        into.groups.push(group);
        if (into.groups.length > 1000) throw new ArchiveError('more than 1000 entities groups');
      }
    }
  }

  private async applySettings(kbid: string, s: KbSettings): Promise<void> {
    for (const l of s.labelsets) await wrapAsync(() => this.labelsets.set({ kbid, labelset: l.id, body: l.body }), `label set ${l.id}`);
    for (const g of s.groups) {
      await this.ds.query(
        `INSERT INTO content.entities_groups (kbid, id, title, color, custom, entities, deleted_entities, deleted, modified_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::text[], $8, now())
         ON CONFLICT (kbid, id) DO UPDATE SET title = EXCLUDED.title, color = EXCLUDED.color, custom = EXCLUDED.custom, entities = EXCLUDED.entities,
           deleted_entities = EXCLUDED.deleted_entities, deleted = EXCLUDED.deleted, modified_at = now()`,
        [kbid, g.id, g.title, g.color, g.custom, JSON.stringify(g.entities), g.deleted_entities, g.deleted],
      );
    }
    if (s.synonyms && Object.keys(s.synonyms).length > 0) await this.synonyms.set(kbid, { synonyms: s.synonyms });
  }
}

function stream(entry: ArchiveEntry): Readable {
  return Readable.from(entry.body);
}

function wrap<T>(fn: () => T, where: string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof DomainError) throw new ArchiveError(`${where}: ${err.message}`);
    throw err;
  }
}

async function wrapAsync<T>(fn: () => Promise<T>, where: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError) throw new ArchiveError(`${where}: ${err.message}`);
    throw err;
  }
}
