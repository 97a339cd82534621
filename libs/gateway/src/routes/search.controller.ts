import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  CatalogFacetsRequest,
  CatalogFacetsResponse,
  CatalogQueryParams,
  CatalogRequest,
  CatalogResponse,
  ContentSubjects,
  ValidationErrorResponse,
  DomainError,
  ErrorCodes,
  FindQueryParams,
  FindRequest,
  FindResponse,
  RetrieveRequest,
  HydrateRequest,
  HydrateResponse,
  AugmentRequest,
  AugmentResponse,
  RetrieveResponse,
  SearchQueryParams,
  SearchRequest,
  GraphNodesRequest,
  GraphNodesResponse,
  GraphPathsRequest,
  GraphPathsResponse,
  GraphRelationsRequest,
  GraphRelationsResponse,
  ResourceSearchResponse,
  SearchResponse,
  SuggestQueryParams,
  SuggestRequest,
  SuggestResponse,
  validatePayload,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { actorOf, busContextOf } from '../http/request-context';

/** GET query members that are lists, booleans, numbers; and those renamed on the way to the body. */
const LISTS = new Set([
  'features',
  'fields',
  'filters',
  'show',
  'field_type',
  'field_type_filter',
  'extracted',
  'security_groups',
  'resource_filters',
  'keyword_filters',
  'faceted',
]);
const BOOLS = new Set(['debug', 'highlight', 'with_duplicates', 'with_synonyms', 'show_hidden', 'hidden', 'rephrase']);
const INTS = new Set(['top_k', 'page_number', 'page_size', 'offset']);
const FLOATS = new Set(['min_score', 'min_score_semantic', 'min_score_bm25']);

/**
 * Turns a GET query string into the POST body shape (API-MAP 2.2: `field_type` → `field_type_filter`,
 * repeated `security_groups` → `security.groups`, `min_score_*` → `min_score`, `filter_expression`
 * as JSON, `sort_field`/`sort_order` → `sort`). Values that do not parse are passed on unchanged so
 * the content service reports them with their names.
 */
export function queryToBody(query: Record<string, unknown>): Record<string, unknown> {
  const members: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    const values = Array.isArray(raw) ? raw.map(String) : [String(raw)];
    const one = values[values.length - 1] as string;
    if (LISTS.has(key))
      members[key] = values.flatMap((v) => (key === 'security_groups' || key === 'filters' ? [v] : v.split(','))).filter((v) => v !== '');
    else if (BOOLS.has(key)) members[key] = one === 'true' ? true : one === 'false' ? false : one;
    else if (INTS.has(key)) members[key] = /^-?\d+$/.test(one) ? Number(one) : one;
    else if (FLOATS.has(key)) members[key] = one !== '' && Number.isFinite(Number(one)) ? Number(one) : one;
    else if (key === 'filter_expression') {
      try {
        members[key] = JSON.parse(one);
      } catch {
        throw DomainError.validation([
          { loc: ['query', 'filter_expression'], msg: 'filter_expression must be a JSON object', type: 'json_invalid' },
        ]);
      }
    } else members[key] = one;
  }
  if (members['field_type'] !== undefined) {
    members['field_type_filter'] = members['field_type'];
    delete members['field_type'];
  }
  if (members['security_groups'] !== undefined) {
    members['security'] = { groups: members['security_groups'] };
    delete members['security_groups'];
  }
  const semantic = members['min_score_semantic'] ?? members['min_score'];
  const bm25 = members['min_score_bm25'];
  if (semantic !== undefined || bm25 !== undefined) {
    members['min_score'] = { ...(semantic !== undefined ? { semantic } : {}), ...(bm25 !== undefined ? { bm25 } : {}) };
    delete members['min_score_semantic'];
    delete members['min_score_bm25'];
  }
  if (members['sort_field'] !== undefined || members['sort_order'] !== undefined || members['sort_limit'] !== undefined) {
    members['sort'] = {
      ...(members['sort_field'] !== undefined ? { field: members['sort_field'] } : {}),
      ...(members['sort_order'] !== undefined ? { order: members['sort_order'] } : {}),
    };
    delete members['sort_field'];
    delete members['sort_order'];
    delete members['sort_limit'];
  }
  return members;
}

/**
 * The body of a resource-scoped search (API-MAP 2.3 `GET /resource/{rid}/search`): the KB search
 * limited to the one resource, paragraphs by default, `page_number`/`page_size` as offset and top_k.
 */
export function resourceSearchBody(query: Record<string, unknown>, rid: string): Record<string, unknown> {
  if (query['resource_filters'] !== undefined) {
    throw DomainError.validation([
      { loc: ['query', 'resource_filters'], msg: 'The resource is the one in the path', type: 'extra_forbidden' },
    ]);
  }
  const body = queryToBody(query);
  const size = body['page_size'];
  const page = body['page_number'];
  delete body['page_size'];
  delete body['page_number'];
  if (size !== undefined) body['top_k'] = size;
  if (page !== undefined)
    body['offset'] = typeof page === 'number' && typeof size === 'number' ? page * size : typeof page === 'number' ? page * 20 : page;
  return { features: ['keyword'], ...body, resource_filters: [rid] };
}

/** Search routes: thin adapters onto the content service, which owns the search engine. */
@ApiTags('Search')
@ApiResponse({ status: 422, type: ValidationErrorResponse, description: 'Every mistake of the request, each with its location' })
@Controller('api/v1/kb/:kbid')
export class SearchController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('find')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Find Knowledge Box',
    description: 'Hybrid retrieval (keyword BM25 + semantic), fused and ranked paragraphs grouped by resource.',
  })
  @ApiBody({ type: FindRequest })
  @ApiResponse({ status: 200, type: FindResponse, description: 'KnowledgeboxFindResults' })
  findPost(@Param('kbid') kbid: string, @Body(bodyOf(FindRequest)) body: FindRequest, @Req() req: AuthedRequest): Promise<FindResponse> {
    return this.bus.request(ContentSubjects.find, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Get('find')
  @ApiQuery({ type: FindQueryParams, required: false })
  @ApiOperation({
    summary: 'Find Knowledge Box (GET)',
    description: 'POST /find with its members as query parameters; lists repeat or are comma-separated, filter_expression is JSON.',
  })
  @ApiResponse({ status: 200, type: FindResponse, description: 'KnowledgeboxFindResults' })
  findGet(@Param('kbid') kbid: string, @Query() query: Record<string, unknown>, @Req() req: AuthedRequest): Promise<FindResponse> {
    const body = validatePayload(FindRequest, queryToBody(query), { loc: ['query'] });
    return this.bus.request(ContentSubjects.find, { kbid, body, method: 'GET', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('retrieve')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Retrieve paragraphs',
    description:
      "Retrieval only (the reference's hidden /retrieve): /find's retrievers, fusion and (when asked) reranker; paragraph ids with their scores and metadata, no resources.",
  })
  @ApiBody({ type: RetrieveRequest })
  @ApiResponse({ status: 200, type: RetrieveResponse, description: 'RetrievalResponse' })
  retrieve(
    @Param('kbid') kbid: string,
    @Body(bodyOf(RetrieveRequest)) body: RetrieveRequest,
    @Req() req: AuthedRequest,
  ): Promise<RetrieveResponse> {
    return this.bus.request(ContentSubjects.retrieve, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('hydrate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Hydrate paragraphs',
    description:
      "The text of given paragraph ids (at most 50), their resources' titles and summaries, and neighbouring paragraphs when asked (the reference's hidden /hydrate); ids the caller may not see are left out.",
  })
  @ApiBody({ type: HydrateRequest })
  @ApiResponse({ status: 200, type: HydrateResponse, description: 'Hydrated' })
  hydrate(
    @Param('kbid') kbid: string,
    @Body(bodyOf(HydrateRequest)) body: HydrateRequest,
    @Req() req: AuthedRequest,
  ): Promise<HydrateResponse> {
    return this.bus.request(ContentSubjects.hydrate, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('augment')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Augment resources, fields and paragraphs',
    description:
      "Given resources, fields and paragraphs by id (at most 100 ids in all), what the RAG strategies add without a search (the reference's hidden /augment): titles, summaries, labels and basic metadata of resources, a field's text, paragraphs' text, positions and neighbours; ids the caller may not see are left out.",
  })
  @ApiBody({ type: AugmentRequest })
  @ApiResponse({ status: 200, type: AugmentResponse, description: 'Augmented' })
  augment(
    @Param('kbid') kbid: string,
    @Body(bodyOf(AugmentRequest)) body: AugmentRequest,
    @Req() req: AuthedRequest,
  ): Promise<AugmentResponse> {
    return this.bus.request(ContentSubjects.augment, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('catalog')
  @HttpCode(200)
  @ApiOperation({
    summary: 'List resources of a Knowledge Box (catalog)',
    description: 'Title/slug query, filters, facets, sort and paging over resources.',
  })
  @ApiBody({ type: CatalogRequest })
  @ApiResponse({ status: 200, type: CatalogResponse, description: 'CatalogResponse' })
  catalogPost(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CatalogRequest)) body: CatalogRequest,
    @Req() req: AuthedRequest,
  ): Promise<CatalogResponse> {
    return this.bus.request(ContentSubjects.catalog, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Get('catalog')
  @ApiQuery({ type: CatalogQueryParams, required: false })
  @ApiOperation({
    summary: 'List resources of a Knowledge Box (catalog, GET)',
    description: 'POST /catalog with its members as query parameters (sort_field, sort_order; filter_expression as JSON).',
  })
  @ApiResponse({ status: 200, type: CatalogResponse, description: 'CatalogResponse' })
  catalogGet(@Param('kbid') kbid: string, @Query() query: Record<string, unknown>, @Req() req: AuthedRequest): Promise<CatalogResponse> {
    const body = validatePayload(CatalogRequest, queryToBody(query), { loc: ['query'] });
    return this.bus.request(ContentSubjects.catalog, { kbid, body, method: 'GET', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('catalog/facets')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Catalog facets',
    description: 'Counts of resource tags under each prefix, e.g. {"prefixes": [{"prefix": "/l"}]}.',
  })
  @ApiBody({ type: CatalogFacetsRequest })
  @ApiResponse({ status: 200, type: CatalogFacetsResponse })
  catalogFacets(
    @Param('kbid') kbid: string,
    @Body(bodyOf(CatalogFacetsRequest)) body: CatalogFacetsRequest,
    @Req() req: AuthedRequest,
  ): Promise<CatalogFacetsResponse> {
    return this.bus.request(ContentSubjects.catalogFacets, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('graph')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search Knowledge Box graph paths',
    description:
      "Edges (source node → relation → destination node) of the KB's knowledge graph matching a boolean query over paths, nodes, relations and who generated them.",
  })
  @ApiBody({ type: GraphPathsRequest })
  @ApiResponse({ status: 200, type: GraphPathsResponse, description: 'GraphSearchResponse' })
  graphPaths(
    @Param('kbid') kbid: string,
    @Body(bodyOf(GraphPathsRequest)) body: GraphPathsRequest,
    @Req() req: AuthedRequest,
  ): Promise<GraphPathsResponse> {
    return this.bus.request(ContentSubjects.graphPaths, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('graph/nodes')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search Knowledge Box graph nodes',
    description:
      "Nodes of the KB's knowledge graph matching a boolean query over nodes (exact or fuzzy value, type, group) and who generated their edges.",
  })
  @ApiBody({ type: GraphNodesRequest })
  @ApiResponse({ status: 200, type: GraphNodesResponse, description: 'GraphNodesSearchResponse' })
  graphNodes(
    @Param('kbid') kbid: string,
    @Body(bodyOf(GraphNodesRequest)) body: GraphNodesRequest,
    @Req() req: AuthedRequest,
  ): Promise<GraphNodesResponse> {
    return this.bus.request(ContentSubjects.graphNodes, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('graph/relations')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search Knowledge Box graph relations',
    description: "Relation kinds (label and type) of the KB's knowledge graph matching a boolean query.",
  })
  @ApiBody({ type: GraphRelationsRequest })
  @ApiResponse({ status: 200, type: GraphRelationsResponse, description: 'GraphRelationsSearchResponse' })
  graphRelations(
    @Param('kbid') kbid: string,
    @Body(bodyOf(GraphRelationsRequest)) body: GraphRelationsRequest,
    @Req() req: AuthedRequest,
  ): Promise<GraphRelationsResponse> {
    return this.bus.request(ContentSubjects.graphRelations, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Post('search')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search Knowledge Box',
    description: 'Separate result lists: paragraphs (BM25), fulltext (fields), sentences (semantic); facets; offset paging.',
  })
  @ApiBody({ type: SearchRequest })
  @ApiResponse({ status: 200, type: SearchResponse, description: 'KnowledgeboxSearchResults' })
  searchPost(
    @Param('kbid') kbid: string,
    @Body(bodyOf(SearchRequest)) body: SearchRequest,
    @Req() req: AuthedRequest,
  ): Promise<SearchResponse> {
    return this.bus.request(ContentSubjects.search, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Get('search')
  @ApiQuery({ type: SearchQueryParams, required: false })
  @ApiOperation({ summary: 'Search Knowledge Box (GET)', description: 'POST /search with its members as query parameters.' })
  @ApiResponse({ status: 200, type: SearchResponse, description: 'KnowledgeboxSearchResults' })
  searchGet(@Param('kbid') kbid: string, @Query() query: Record<string, unknown>, @Req() req: AuthedRequest): Promise<SearchResponse> {
    const body = validatePayload(SearchRequest, queryToBody(query), { loc: ['query'] });
    return this.bus.request(ContentSubjects.search, { kbid, body, method: 'GET', actor: actorOf(req) }, busContextOf(req));
  }

  @Get('resource/:rid/search')
  @ApiOperation({
    summary: 'Search Resource',
    description: 'The /search engine limited to one resource: paragraphs (keyword) by default, sentences with features=semantic.',
  })
  @ApiResponse({ status: 200, type: ResourceSearchResponse, description: 'ResourceSearchResults' })
  @ApiResponse({ status: 404, description: 'No such resource in the KB' })
  async resourceSearch(
    @Param('kbid') kbid: string,
    @Param('rid') rid: string,
    @Query() query: Record<string, unknown>,
    @Req() req: AuthedRequest,
  ): Promise<ResourceSearchResponse> {
    const members = resourceSearchBody(query, rid);
    const found = await this.bus.request(ContentSubjects.resourceExists, { kbid, rid }, busContextOf(req));
    if (!found.exists) throw new DomainError(ErrorCodes.RESOURCE_NOT_FOUND, 'Resource not found');
    // Checked here as every GET search is (after the 404, which does not depend on the query).
    const body = validatePayload(SearchRequest, members, { loc: ['query'] });
    const r = await this.bus.request(ContentSubjects.search, { kbid, body, method: 'GET', actor: actorOf(req) }, busContextOf(req));
    return {
      sentences: r.sentences ?? null,
      paragraphs: r.paragraphs ?? null,
      relations: r.relations ?? null,
      nodes: null,
      shards: null,
    };
  }

  @Post('suggest')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Suggest on a Knowledge Box',
    description: 'Paragraphs matching the words typed so far (the last one as a prefix) and entities.',
  })
  @ApiBody({ type: SuggestRequest })
  @ApiResponse({ status: 200, type: SuggestResponse, description: 'KnowledgeboxSuggestResults' })
  suggestPost(
    @Param('kbid') kbid: string,
    @Body(bodyOf(SuggestRequest)) body: SuggestRequest,
    @Req() req: AuthedRequest,
  ): Promise<SuggestResponse> {
    return this.bus.request(ContentSubjects.suggest, { kbid, body, method: 'POST', actor: actorOf(req) }, busContextOf(req));
  }

  @Get('suggest')
  @ApiQuery({ type: SuggestQueryParams, required: false })
  @ApiOperation({ summary: 'Suggest on a Knowledge Box (GET)', description: 'POST /suggest with its members as query parameters.' })
  @ApiResponse({ status: 200, type: SuggestResponse, description: 'KnowledgeboxSuggestResults' })
  suggestGet(@Param('kbid') kbid: string, @Query() query: Record<string, unknown>, @Req() req: AuthedRequest): Promise<SuggestResponse> {
    const body = validatePayload(SuggestRequest, queryToBody(query), { loc: ['query'] });
    return this.bus.request(ContentSubjects.suggest, { kbid, body, method: 'GET', actor: actorOf(req) }, busContextOf(req));
  }
}
