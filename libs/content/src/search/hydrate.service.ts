import { Inject, Injectable } from '@nestjs/common';
import type { HydratedParagraph, HydratedResource, HydrateRequest, HydrateResponse } from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { PARAGRAPH_COLUMNS, type ParagraphRow } from './find/search.repository';
import { securityCondition, securityGroupsOf } from './query/filters';
import { SqlParams } from './query/sql';

/** A paragraph id's resource part in the stored (dashed, lower case) form. */
function canonicalId(id: string): string {
  const slash = id.indexOf('/');
  const rid = id.slice(0, slash).toLowerCase().replace(/-/g, '');
  return `${rid.slice(0, 8)}-${rid.slice(8, 12)}-${rid.slice(12, 16)}-${rid.slice(16, 20)}-${rid.slice(20)}${id.slice(slash)}`;
}

/**
 * `/hydrate` (the reference's hidden route): the text of given paragraph ids, their resources'
 * titles and summaries, and the paragraphs around them when asked. Visibility is /find's: the
 * KB, the caller's security groups and hidden resources decide which ids answer at all.
 */
@Injectable()
export class HydrateService {
  constructor(@Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource) {}

  async hydrate(req: { kbid: string; body: HydrateRequest; forced_groups?: string[] }): Promise<HydrateResponse> {
    const b = req.body;
    const o = b.hydration ?? {};
    const withText = o.paragraph?.text ?? true;
    const n = o.paragraph?.related?.neighbours;
    const before = n ? (n.before ?? 2) : 0;
    const after = n ? (n.after ?? 2) : 0;
    const params = new SqlParams();
    const conds = [`p.kbid = ${params.add(req.kbid)}`];
    conds.push(securityCondition(params, 'p.groups', securityGroupsOf(b.security, req.forced_groups), false));
    if (!(b.show_hidden ?? false)) conds.push('NOT p.hidden');
    const ids = [...new Set(b.data.map(canonicalId))];
    const asked = (await this.ds.query(
      `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs p
        WHERE ${conds.join(' AND ')} AND p.paragraph_id = ANY(${params.add(ids)}::text[])`,
      params.values,
    )) as ParagraphRow[];
    const paragraphs: Record<string, HydratedParagraph> = {};
    const put = (r: ParagraphRow): HydratedParagraph =>
      (paragraphs[r.paragraph_id] ??= {
        id: r.paragraph_id,
        field: `${r.rid}/${r.field}`,
        resource: r.rid,
        ...(withText ? { text: r.text } : {}),
      });
    for (const r of asked) put(r);
    if (before > 0 || after > 0) {
      for (const r of asked) {
        // (a resource's paragraphs share its groups and hidden flag: its neighbours are as visible as it)
        const around = (await this.ds.query(
          `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs
            WHERE kbid = $1 AND rid = $2 AND field = $3 AND split = $4 AND idx BETWEEN $5 AND $6 AND idx <> $7 ORDER BY idx`,
          [req.kbid, r.rid, r.field, r.split, r.idx - before, r.idx + after, r.idx],
        )) as ParagraphRow[];
        for (const x of around) put(x);
        (paragraphs[r.paragraph_id] as HydratedParagraph).related = {
          neighbours: {
            before: around.filter((x) => x.idx < r.idx).map((x) => x.paragraph_id),
            after: around.filter((x) => x.idx > r.idx).map((x) => x.paragraph_id),
          },
        };
      }
    }
    const resources: Record<string, HydratedResource> = {};
    const title = o.resource?.title ?? true;
    const summary = o.resource?.summary ?? false;
    const rids = [...new Set(asked.map((r) => r.rid))];
    if (rids.length && (title || summary)) {
      const rows = (await this.ds.query(
        `SELECT id::text AS id, title, summary FROM content.resources WHERE kbid = $1 AND id = ANY($2::uuid[])`,
        [req.kbid, rids],
      )) as { id: string; title: string; summary: string }[];
      for (const r of rows) resources[r.id] = { ...(title ? { title: r.title } : {}), ...(summary ? { summary: r.summary } : {}) };
    }
    return { resources, paragraphs };
  }
}
