import { Inject, Injectable } from '@nestjs/common';
import {
  AUGMENT_MAX_FIELD_TEXT,
  type ActorDto,
  type AugmentedField,
  type AugmentedParagraph,
  type AugmentedResource,
  type AugmentRequest,
  type AugmentResponse,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { SearchAuditService } from './find/search-audit.service';
import type { ParagraphRow } from './find/search.repository';
import { canonicalId, canonicalRid, paragraphWindows, visibleParagraphs } from './paragraph-windows';
import { securityGroupsOf } from './query/filters';
import { SqlParams } from './query/sql';

/** `/l/{labelset}/{label}` tags as `{labelset: [label, …]}`. */
function labelsOf(tags: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of tags) {
    if (!t.startsWith('/l/')) continue;
    const rest = t.slice(3);
    const cut = rest.indexOf('/');
    if (cut <= 0) continue;
    (out[rest.slice(0, cut)] ??= []).push(rest.slice(cut + 1));
  }
  for (const k of Object.keys(out)) out[k]?.sort();
  return out;
}

interface ResourceRow {
  id: string;
  slug: string;
  title: string;
  summary: string;
  icon: string;
  created: Date;
  modified: Date;
  search_tags: string[];
}

/**
 * `/augment` (the reference's hidden route): given resources, fields and paragraphs by id, what
 * the RAG strategies add (hierarchy's title and summary, metadata's labels, field extension's
 * text, neighbouring paragraphs) without a search. Visibility is /hydrate's and /find's: the KB,
 * the caller's security groups and hidden resources decide which ids answer at all; the others are
 * left out, as unknown ids are.
 */
@Injectable()
export class AugmentService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly auditor: SearchAuditService,
  ) {}

  async augment(req: { kbid: string; body: AugmentRequest; forced_groups?: string[]; actor?: ActorDto }): Promise<AugmentResponse> {
    const started = Date.now();
    const groups = securityGroupsOf(req.body.security, req.forced_groups);
    const showHidden = req.body.show_hidden ?? false;
    const out: AugmentResponse = { resources: {}, fields: {}, paragraphs: {} };
    for (const r of req.body.resources ?? []) await this.resources(req.kbid, r, groups, showHidden, out.resources);
    for (const f of req.body.fields ?? []) await this.fields(req.kbid, f, groups, showHidden, out.fields);
    for (const p of req.body.paragraphs ?? []) await this.paragraphs(req.kbid, p, groups, showHidden, out.paragraphs);
    const answered = [...Object.keys(out.resources), ...Object.keys(out.fields), ...Object.keys(out.paragraphs)];
    this.auditor.audit(req, 'augment', started, {
      resources_count: new Set(answered.map((id) => id.split('/')[0])).size,
      fields_count: Object.keys(out.fields).length,
      paragraphs_count: Object.keys(out.paragraphs).length,
    });
    return out;
  }

  /** The visible paragraph rows of the KB matching `where` (a condition on `p`). */
  private rows(
    kbid: string,
    groups: string[] | undefined,
    showHidden: boolean,
    where: (params: SqlParams) => string,
    order?: string,
  ): Promise<ParagraphRow[]> {
    return visibleParagraphs(this.ds, { kbid, groups, showHidden }, where, order);
  }

  private async resources(
    kbid: string,
    o: NonNullable<AugmentRequest['resources']>[number],
    groups: string[] | undefined,
    showHidden: boolean,
    into: Record<string, AugmentedResource>,
  ): Promise<void> {
    const params = new SqlParams();
    const conds = [`r.kbid = ${params.add(kbid)}`, `r.id = ANY(${params.add([...new Set(o.given.map(canonicalRid))])}::uuid[])`];
    // (resource-level security on the resources table, as /catalog reads it: access_groups is jsonb there)
    if (groups?.length) conds.push(`(r.access_groups = '[]'::jsonb OR r.access_groups ?| ${params.add(groups)}::text[])`);
    if (!showHidden) conds.push('NOT r.hidden');
    const rows = (await this.ds.query(
      `SELECT r.id::text AS id, r.slug, r.title, r.summary, r.icon, r.created_at AS created, r.modified_at AS modified, r.search_tags
         FROM content.resources r WHERE ${conds.join(' AND ')}`,
      params.values,
    )) as ResourceRow[];
    for (const r of rows) {
      const a = (into[r.id] ??= { id: r.id });
      if (o.title) a.title = r.title;
      if (o.summary) a.summary = r.summary;
      if (o.basic) Object.assign(a, { slug: r.slug, icon: r.icon, created: iso(r.created), modified: iso(r.modified) });
      if (o.classification_labels) a.classification_labels = labelsOf(r.search_tags ?? []);
    }
  }

  private async fields(
    kbid: string,
    o: NonNullable<AugmentRequest['fields']>[number],
    groups: string[] | undefined,
    showHidden: boolean,
    into: Record<string, AugmentedField>,
  ): Promise<void> {
    const asked = [...new Set(o.given.map(canonicalId))].map((id) => {
      const [rid, letter, field, split] = id.split('/') as [string, string, string, string | undefined];
      return { id, rid, field: `${letter}/${field}`, split };
    });
    const rows = await this.rows(
      kbid,
      groups,
      showHidden,
      (params) =>
        `p.rid = ANY(${params.add([...new Set(asked.map((a) => a.rid))])}::uuid[]) AND p.field = ANY(${params.add([
          ...new Set(asked.map((a) => a.field)),
        ])}::text[])`,
      'p.rid, p.field, p.split, p.start_offset',
    );
    for (const a of asked) {
      const mine = rows.filter((r) => r.rid === a.rid && r.field === a.field && (a.split === undefined || r.split === a.split));
      if (mine.length === 0) continue; // unknown, not indexed yet, or not visible: left out
      const f = (into[a.id] ??= {});
      if (o.text) {
        const text = mine.map((r) => r.text).join('\n');
        f.text = text.length > AUGMENT_MAX_FIELD_TEXT ? text.slice(0, AUGMENT_MAX_FIELD_TEXT) : text;
        if (text.length > AUGMENT_MAX_FIELD_TEXT) f.text_truncated = true;
      }
    }
  }

  private async paragraphs(
    kbid: string,
    o: NonNullable<AugmentRequest['paragraphs']>[number],
    groups: string[] | undefined,
    showHidden: boolean,
    into: Record<string, AugmentedParagraph>,
  ): Promise<void> {
    const withText = o.text ?? true;
    const before = o.neighbours_before ?? 0;
    const after = o.neighbours_after ?? 0;
    const ids = [...new Set(o.given.map((g) => canonicalId(g.id)))];
    const asked = await this.rows(kbid, groups, showHidden, (params) => `p.paragraph_id = ANY(${params.add(ids)}::text[])`);
    const put = (r: ParagraphRow): AugmentedParagraph =>
      (into[r.paragraph_id] ??= {
        ...(withText ? { text: r.text } : {}),
        position: { index: r.idx, start: r.start_offset, end: r.end_offset, page_number: r.page ?? null },
      });
    for (const r of asked) put(r);
    const windows = await paragraphWindows(this.ds, { kbid, groups, showHidden }, asked, before, after);
    for (const r of asked) {
      const window = windows.get(r.paragraph_id);
      if (!window) continue;
      for (const x of [...window.before, ...window.after]) put(x);
      const a = into[r.paragraph_id] as AugmentedParagraph;
      if (before > 0) a.neighbours_before = window.before.map((x) => x.paragraph_id);
      if (after > 0) a.neighbours_after = window.after.map((x) => x.paragraph_id);
    }
  }
}

function iso(d: Date | string): string {
  return (d instanceof Date ? d : new Date(d)).toISOString();
}
