import type { DataSource } from 'typeorm';
import { PARAGRAPH_COLUMNS, type ParagraphRow } from './find/search.repository';
import { securityCondition } from './query/filters';
import { SqlParams } from './query/sql';

/** A resource id in the stored form (dashed, lower case), from one with or without dashes. */
export function canonicalRid(rid: string): string {
  const r = rid.toLowerCase().replace(/-/g, '');
  return `${r.slice(0, 8)}-${r.slice(8, 12)}-${r.slice(12, 16)}-${r.slice(16, 20)}-${r.slice(20)}`;
}

/** An id `{rid}/...` (paragraph or field) with its resource part canonical. */
export function canonicalId(id: string): string {
  const slash = id.indexOf('/');
  return canonicalRid(id.slice(0, slash)) + id.slice(slash);
}

/** Which paragraphs of a KB a caller sees: /find's rules (the KB, the security groups, hidden resources). */
export interface Visibility {
  kbid: string;
  groups: string[] | undefined;
  showHidden: boolean;
}

/** The visible paragraphs `where` names, in reading order (resource, field, split, index). */
export async function visibleParagraphs(
  ds: DataSource,
  v: Visibility,
  where: (params: SqlParams) => string,
  order = 'p.rid, p.field, p.split, p.idx',
): Promise<ParagraphRow[]> {
  const params = new SqlParams();
  const conds = [`p.kbid = ${params.add(v.kbid)}`, securityCondition(params, 'p.groups', v.groups, false)];
  if (!v.showHidden) conds.push('NOT p.hidden');
  conds.push(where(params));
  return (await ds.query(
    `SELECT ${PARAGRAPH_COLUMNS} FROM content.search_paragraphs p WHERE ${conds.join(' AND ')} ORDER BY ${order}`,
    params.values,
  )) as ParagraphRow[];
}

/**
 * The paragraphs around each of `asked` (up to `before` and `after` of the same field split, the
 * paragraph itself left out), read in one statement, keyed by the asked paragraph's id. A
 * resource's paragraphs share its groups and hidden flag, so its neighbours are as visible as it;
 * the same conditions are applied anyway.
 */
export async function paragraphWindows(
  ds: DataSource,
  v: Visibility,
  asked: ParagraphRow[],
  before: number,
  after: number,
): Promise<Map<string, { before: ParagraphRow[]; after: ParagraphRow[] }>> {
  const windows = new Map<string, { before: ParagraphRow[]; after: ParagraphRow[] }>();
  if (asked.length === 0 || (before <= 0 && after <= 0)) return windows;
  const around = await visibleParagraphs(
    ds,
    v,
    (params) =>
      `EXISTS (SELECT 1 FROM unnest(${params.add(asked.map((r) => r.rid))}::uuid[], ${params.add(asked.map((r) => r.field))}::text[],
                 ${params.add(asked.map((r) => r.split))}::text[], ${params.add(asked.map((r) => r.idx))}::int[]) AS a(a_rid, a_field, a_split, a_idx)
               WHERE p.rid = a.a_rid AND p.field = a.a_field AND p.split = a.a_split
                 AND p.idx BETWEEN a.a_idx - ${params.add(before)}::int AND a.a_idx + ${params.add(after)}::int)`,
  );
  const bySplit = new Map<string, ParagraphRow[]>();
  for (const x of around) {
    const key = `${x.rid}/${x.field}/${x.split}`;
    const list = bySplit.get(key);
    if (list) list.push(x);
    else bySplit.set(key, [x]);
  }
  for (const r of asked) {
    const split = bySplit.get(`${r.rid}/${r.field}/${r.split}`) ?? [];
    windows.set(r.paragraph_id, {
      before: split.filter((x) => x.idx < r.idx && x.idx >= r.idx - before),
      after: split.filter((x) => x.idx > r.idx && x.idx <= r.idx + after),
    });
  }
  return windows;
}
