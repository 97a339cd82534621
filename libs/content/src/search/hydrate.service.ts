import { Inject, Injectable } from '@nestjs/common';
import type { HydratedParagraph, HydratedResource, HydrateRequest, HydrateResponse } from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import type { ParagraphRow } from './find/search.repository';
import { canonicalId, paragraphWindows, visibleParagraphs } from './paragraph-windows';
import { securityGroupsOf } from './query/filters';

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
    const visibility = { kbid: req.kbid, groups: securityGroupsOf(b.security, req.forced_groups), showHidden: b.show_hidden ?? false };
    const ids = [...new Set(b.data.map(canonicalId))];
    const asked = await visibleParagraphs(
      this.ds,
      visibility,
      (params) => `p.paragraph_id = ANY(${params.add(ids)}::text[])`,
      'p.paragraph_id',
    );
    const paragraphs: Record<string, HydratedParagraph> = {};
    const put = (r: ParagraphRow): HydratedParagraph =>
      (paragraphs[r.paragraph_id] ??= {
        id: r.paragraph_id,
        field: `${r.rid}/${r.field}`,
        resource: r.rid,
        ...(withText ? { text: r.text } : {}),
      });
    for (const r of asked) put(r);
    const windows = await paragraphWindows(this.ds, visibility, asked, before, after);
    for (const r of asked) {
      const around = windows.get(r.paragraph_id);
      if (!around) continue;
      for (const x of [...around.before, ...around.after]) put(x);
      (paragraphs[r.paragraph_id] as HydratedParagraph).related = {
        neighbours: { before: around.before.map((x) => x.paragraph_id), after: around.after.map((x) => x.paragraph_id) },
      };
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
