import { Inject, Injectable } from '@nestjs/common';
import {
  catalogQueryWords,
  type CatalogFacetsRequest,
  type CatalogFacetsResponse,
  type CatalogRequest,
  type CatalogResponse,
  type ResourceDto,
  type SearchPayload,
} from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { RESOURCE_TARGET, FilterCompiler } from './query/filters';
import { Issues } from './query/issues';
import { serializationOf } from './query/serialization';
import { facetCounts } from './query/facets';
import { SqlParams, escapeLike, likePrefix } from './query/sql';
import { SearchRepository } from './find/search.repository';
import { SearchContextService } from './search-context.service';

/** Resource-level security on the resources table (access_groups is jsonb there). */
function resourceSecurity(params: SqlParams, groups: string[] | undefined): string {
  if (!groups?.length) return 'TRUE';
  return `(r.access_groups = '[]'::jsonb OR r.access_groups ?| ${params.add(groups)}::text[])`;
}

/**
 * `/catalog` (API-MAP 2.6): resources (not paragraphs) matching a title/slug query and filters,
 * sorted and paged, with facet counts over the resource tags; and `/catalog/facets`.
 */
@Injectable()
export class CatalogService {
  constructor(
    @Inject(CONTENT_DATA_SOURCE) private readonly ds: DataSource,
    private readonly context: SearchContextService,
    private readonly repository: SearchRepository,
  ) {}

  /** The title/slug condition of `query` (a string: every word in the title; an object: one field, one way of matching). */
  private queryCondition(q: CatalogRequest['query'] | null, params: SqlParams): string {
    if (q === undefined || q === null || q === '') return 'TRUE';
    if (typeof q === 'string') {
      const words = catalogQueryWords(q);
      return words.length ? words.map((w) => `lower(r.title) LIKE ${params.add(`%${escapeLike(w)}%`)}`).join(' AND ') : 'TRUE';
    }
    const field = q.field ?? 'title';
    const match = q.match ?? 'exact';
    const col = field === 'slug' ? 'r.slug' : 'lower(r.title)';
    const t = field === 'slug' ? q.query : q.query.toLowerCase();
    switch (match) {
      case 'exact':
        return `${col} = ${params.add(t)}`;
      case 'starts_with':
        return `${col} LIKE ${params.add(likePrefix(t))}`;
      case 'ends_with':
        return `${col} LIKE ${params.add(`%${escapeLike(t)}`)}`;
      case 'contains':
        return `${col} LIKE ${params.add(`%${escapeLike(t)}%`)}`;
      case 'words':
      case 'fuzzy': {
        // fuzzy: every word, or its first letters for longer words (a typo near the end still matches).
        const words = t.match(/[\p{L}\p{N}]+/gu) ?? [];
        return words.length
          ? words
              .map(
                (w) =>
                  `${col} LIKE ${params.add(`%${escapeLike(match === 'fuzzy' && w.length > 4 ? w.slice(0, Math.ceil(w.length * 0.75)) : w)}%`)}`,
              )
              .join(' AND ')
          : 'TRUE';
      }
      default:
        return 'TRUE';
    }
  }

  /** `/catalog`; `req.body` was checked by CatalogRequest (at the gateway and on the bus). */
  async catalog(req: SearchPayload<CatalogRequest>): Promise<CatalogResponse> {
    const body = req.body;
    const issues = new Issues();
    const params = new SqlParams();
    const kb = params.add(req.kbid);
    const languages = await this.context.kbLanguages(req.kbid);
    const conds = [
      `r.kbid = ${kb}`,
      this.queryCondition(body.query, params),
      new FilterCompiler(params, RESOURCE_TARGET(kb), languages).compile(body, issues, { allowFieldFilters: false }),
    ];
    issues.throwIfAny();
    const faceted = body.faceted ?? [];
    const sortField = body.sort?.field ?? 'created';
    const sortOrder = body.sort?.order ?? 'desc';
    const pageNumber = body.page_number ?? 0;
    const pageSize = body.page_size ?? 20;
    const hidden = body.hidden;
    if (hidden === true || hidden === false) conds.push(hidden ? 'r.hidden' : 'NOT r.hidden');
    const showHidden = body.show_hidden ?? true;
    if (!showHidden && hidden === undefined) conds.push('NOT r.hidden');
    if (body.with_status !== undefined && body.with_status !== null) conds.push(`r.status = ${params.add(body.with_status)}`);
    const groups = body.security ? (body.security.groups ?? body.security.access_groups) : undefined;
    conds.push(resourceSecurity(params, Array.isArray(groups) ? groups.filter((g) => typeof g === 'string') : undefined));
    const serialization = serializationOf(body);
    const where = conds.join(' AND ');
    const orderCol = sortField === 'title' ? 'lower(r.title)' : sortField === 'modified' ? 'r.modified_at' : 'r.created_at';
    const dir = sortOrder === 'asc' ? 'ASC' : 'DESC';
    const total = (await this.ds.query(`SELECT count(*)::int AS n FROM content.resources r WHERE ${where}`, params.values)) as {
      n: number;
    }[];
    const page = new SqlParams(params.values);
    const rows = (await this.ds.query(
      `SELECT r.id::text AS id, r.search_tags AS tags FROM content.resources r WHERE ${where} ORDER BY ${orderCol} ${dir}, r.id LIMIT ${page.add(pageSize)} OFFSET ${page.add(pageNumber * pageSize)}`,
      page.values,
    )) as { id: string; tags: string[] }[];
    const resources = await this.repository.resources(
      req.kbid,
      rows.map((x) => x.id),
      serialization,
    );
    const facets = faceted.length
      ? await facetCounts(this.ds.manager, { from: 'content.resources r', tags: 'r.search_tags', counted: 'r.id', where, params }, faceted)
      : {};
    const count = total[0]?.n ?? 0;
    return {
      resources: Object.fromEntries(rows.flatMap((x) => (resources.has(x.id) ? [[x.id, resources.get(x.id) as ResourceDto]] : []))),
      fulltext: {
        results: rows.map((x) => ({
          score: 0,
          rid: x.id,
          field_type: 'a',
          field: 'title',
          labels: x.tags.filter((t) => t.startsWith('/l/')).map((t) => t.slice(3)),
        })),
        facets,
        query: typeof body.query === 'string' ? body.query : '',
        total: count,
        page_number: pageNumber,
        page_size: pageSize,
        next_page: (pageNumber + 1) * pageSize < count,
        min_score: 0,
      },
      shards: null,
    };
  }

  /** `/catalog/facets`: `{prefixes: [{prefix, depth?}]}` → `{facets: {tag: count}}` over every resource of the KB. */
  async catalogFacets(req: SearchPayload<CatalogFacetsRequest>): Promise<CatalogFacetsResponse> {
    const list = req.body.prefixes;
    const facets: Record<string, number> = {};
    for (const { prefix, depth } of list) {
      const clean = prefix.replace(/\/+$/, '');
      const rows = (await this.ds.query(
        `SELECT tg AS tag, count(*)::int AS n FROM content.resources r, unnest(r.search_tags) AS tg WHERE r.kbid = $1 AND tg LIKE $2 GROUP BY tg`,
        [req.kbid, likePrefix(`${clean}/`)],
      )) as { tag: string; n: number }[];
      const base = clean.split('/').length;
      for (const row of rows) {
        if (typeof depth === 'number' && row.tag.split('/').length - base > depth) continue;
        facets[row.tag] = (facets[row.tag] ?? 0) + row.n;
      }
    }
    return { facets };
  }
}
