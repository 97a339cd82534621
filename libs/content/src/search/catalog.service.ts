import { Inject, Injectable } from '@nestjs/common';
import { CATALOG_MATCHES, CATALOG_STATUSES, type CatalogFacetsResponse, type CatalogResponse } from '@kb/contracts';
import type { DataSource } from 'typeorm';
import { CONTENT_DATA_SOURCE } from '../content.tokens';
import { RESOURCE_TARGET, FilterCompiler } from './query/filters';
import { REQUEST_LIMITS } from './query/request-limits';
import { readSerialization, RequestReader, isObject } from './query/request-reader';
import { facetCounts } from './query/facets';
import { SqlParams, escapeLike, likePrefix } from './query/sql';
import { FindService, type RetrievalRequest } from './find.service';
import { SearchContextService } from './search-context.service';

const STATUSES = CATALOG_STATUSES;
const MATCHES = CATALOG_MATCHES;

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
    private readonly finder: FindService,
  ) {}

  private queryCondition(r: RequestReader, params: SqlParams): string {
    const q = r.raw('query');
    if (q === undefined || q === null || q === '') return 'TRUE';
    if (typeof q === 'string') {
      const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      if (q.length > REQUEST_LIMITS.queryChars || words.length > REQUEST_LIMITS.catalogQueryWords) {
        r.issue(
          'query',
          `Input should have at most ${REQUEST_LIMITS.queryChars} characters and ${REQUEST_LIMITS.catalogQueryWords} words`,
          'string_too_long',
        );
        return 'TRUE';
      }
      return words.length ? words.map((w) => `lower(r.title) LIKE ${params.add(`%${escapeLike(w)}%`)}`).join(' AND ') : 'TRUE';
    }
    if (!isObject(q)) {
      r.issue('query', 'Input should be a string or {field, match, query}', 'model_type');
      return 'TRUE';
    }
    const field = q['field'] ?? 'title';
    const match = q['match'] ?? 'exact';
    const text = q['query'];
    if (field !== 'title' && field !== 'slug') r.issue(['query', 'field'], "Input should be 'title' or 'slug'", 'enum');
    if (!MATCHES.includes(match as (typeof MATCHES)[number]))
      r.issue(['query', 'match'], `Input should be ${MATCHES.map((m) => `'${m}'`).join(', ')}`, 'enum');
    if (typeof text !== 'string') {
      r.issue(['query', 'query'], 'Input should be a valid string', 'string_type');
      return 'TRUE';
    }
    if (field === 'slug' && match !== 'exact' && match !== 'starts_with')
      r.issue(['query', 'match'], "slug supports only 'exact' and 'starts_with'", 'value_error');
    const col = field === 'slug' ? 'r.slug' : 'lower(r.title)';
    const t = field === 'slug' ? text : text.toLowerCase();
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

  async catalog(req: RetrievalRequest): Promise<CatalogResponse> {
    const r = new RequestReader(req.body);
    const params = new SqlParams();
    const kb = params.add(req.kbid);
    const languages = await this.context.kbLanguages(req.kbid);
    const conds = [
      `r.kbid = ${kb}`,
      this.queryCondition(r, params),
      new FilterCompiler(params, RESOURCE_TARGET(kb), languages).readAll(r, { allowFieldFilters: false }),
    ];
    const faceted = r.stringList('faceted', { maxItems: REQUEST_LIMITS.facets }) ?? [];
    const sort = r.object('sort');
    const sortField = sort?.['field'] ?? 'created';
    const sortOrder = sort?.['order'] ?? 'desc';
    if (!['created', 'modified', 'title'].includes(sortField as string))
      r.issue(['sort', 'field'], "Input should be 'created', 'modified' or 'title'", 'enum');
    if (!['asc', 'desc'].includes(sortOrder as string)) r.issue(['sort', 'order'], "Input should be 'asc' or 'desc'", 'enum');
    const pageNumber = r.int('page_number', 0, 0, 100_000);
    const pageSize = r.int('page_size', 20, 1, 200);
    const hiddenRaw = r.raw('hidden');
    if (hiddenRaw === true || hiddenRaw === false) conds.push(hiddenRaw ? 'r.hidden' : 'NOT r.hidden');
    else if (hiddenRaw !== undefined && hiddenRaw !== null) r.issue('hidden', 'Input should be a valid boolean', 'bool_type');
    const showHidden = r.bool('show_hidden', true);
    if (!showHidden && hiddenRaw === undefined) conds.push('NOT r.hidden');
    const withStatus = r.raw('with_status');
    if (withStatus !== undefined && withStatus !== null) {
      if (typeof withStatus !== 'string' || !STATUSES.includes(withStatus as (typeof STATUSES)[number]))
        r.issue('with_status', `Input should be ${STATUSES.map((s) => `'${s}'`).join(', ')}`, 'enum');
      else conds.push(`r.status = ${params.add(withStatus)}`);
    }
    const security = r.object('security');
    const groups = security ? ((security['groups'] ?? security['access_groups']) as string[] | undefined) : undefined;
    conds.push(resourceSecurity(params, Array.isArray(groups) ? groups.filter((g) => typeof g === 'string') : undefined));
    const serialization = readSerialization(r);
    r.accept('debug', 'shards', 'with_duplicates');
    r.finish();
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
    const resources = await this.finder.resources(
      req.kbid,
      rows.map((x) => x.id),
      serialization,
    );
    const facets = faceted.length
      ? await facetCounts(this.ds.manager, { from: 'content.resources r', tags: 'r.search_tags', counted: 'r.id', where, params }, faceted)
      : {};
    const count = total[0]?.n ?? 0;
    return {
      resources: Object.fromEntries(rows.map((x) => [x.id, resources.get(x.id)]).filter(([, v]) => v)),
      fulltext: {
        results: rows.map((x) => ({
          score: 0,
          rid: x.id,
          field_type: 'a',
          field: 'title',
          labels: x.tags.filter((t) => t.startsWith('/l/')).map((t) => t.slice(3)),
        })),
        facets,
        query: typeof r.body['query'] === 'string' ? r.body['query'] : '',
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
  async catalogFacets(req: RetrievalRequest): Promise<CatalogFacetsResponse> {
    const r = new RequestReader(req.body);
    const prefixes = r.raw('prefixes');
    const list: { prefix: string; depth?: number }[] = [];
    if (!Array.isArray(prefixes)) r.issue('prefixes', 'Input should be a valid list', 'list_type');
    else if (prefixes.length > REQUEST_LIMITS.facets)
      r.issue('prefixes', `List should have at most ${REQUEST_LIMITS.facets} items`, 'too_long');
    else {
      prefixes.forEach((x, i) => {
        if (!isObject(x) || typeof x['prefix'] !== 'string') r.issue(['prefixes', i], 'Input should be {prefix, depth?}', 'model_type');
        else if (x['depth'] !== undefined && x['depth'] !== null && (!Number.isInteger(x['depth']) || (x['depth'] as number) < 0))
          r.issue(['prefixes', i, 'depth'], 'Input should be a non-negative integer', 'int_type');
        else list.push({ prefix: x['prefix'], ...(typeof x['depth'] === 'number' ? { depth: x['depth'] } : {}) });
      });
    }
    r.finish();
    const facets: Record<string, number> = {};
    for (const { prefix, depth } of list) {
      const clean = prefix.replace(/\/+$/, '');
      const rows = (await this.ds.query(
        `SELECT tg AS tag, count(*)::int AS n FROM content.resources r, unnest(r.search_tags) AS tg WHERE r.kbid = $1 AND tg LIKE $2 GROUP BY tg`,
        [req.kbid, likePrefix(`${clean}/`)],
      )) as { tag: string; n: number }[];
      const base = clean.split('/').length;
      for (const row of rows) {
        if (depth !== undefined && row.tag.split('/').length - base > depth) continue;
        facets[row.tag] = (facets[row.tag] ?? 0) + row.n;
      }
    }
    return { facets };
  }
}
