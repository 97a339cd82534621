import { Body, Controller, Delete, Get, Header, HttpCode, Inject, Param, Patch, Post, Put, Req } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import {
  ContentSubjects,
  ExtractStrategyDto,
  KbKvSchemasDto,
  KvSchemaDto,
  SearchConfigurationDto,
  SplitStrategyDto,
  UpdateKvSchemaDto,
  ValidationErrorResponse,
  type StrategyKind,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

/**
 * A KB's saved configurations (API-MAP 3 "KB configuration services"; docs/kb-configuration.md):
 * search configurations applied by `/find` and `/ask` (`search_configuration`), key-value schemas,
 * and split and extract strategies applied by processing to the fields naming them.
 */
/** The strategies of a KB by id. */
type Strategies = Record<string, SplitStrategyDto | ExtractStrategyDto>;

@ApiTags('Knowledge Box Services')
@ApiExtraModels(SearchConfigurationDto, KvSchemaDto, SplitStrategyDto, ExtractStrategyDto)
@ApiResponse({ status: 422, type: ValidationErrorResponse, description: 'Every mistake of the request, each with its location' })
@Controller('api/v1/kb/:kbid')
export class KbConfigController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('search_configurations')
  @ApiOperation({ summary: 'List search configurations' })
  @ApiResponse({ status: 200, schema: { type: 'object', additionalProperties: { $ref: getSchemaPath(SearchConfigurationDto) } } })
  listSearch(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Record<string, SearchConfigurationDto>> {
    return this.bus.request(ContentSubjects.listSearchConfigurations, { kbid }, busContextOf(req));
  }

  @Get('search_configurations/:config_name')
  @ApiOperation({ summary: 'Get search configuration' })
  @ApiResponse({ status: 200, type: SearchConfigurationDto })
  @ApiResponse({ status: 404, description: 'No such configuration' })
  getSearch(@Param('kbid') kbid: string, @Param('config_name') name: string, @Req() req: AuthedRequest): Promise<SearchConfigurationDto> {
    return this.bus.request(ContentSubjects.getSearchConfiguration, { kbid, name }, busContextOf(req));
  }

  @Post('search_configurations/:config_name')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create search configuration',
    description: `A /find or /ask body saved under a name (${'^[a-zA-Z0-9:_-]{1,64}$'}), checked as the live request is; at most 50 per KB.`,
  })
  @ApiBody({ type: SearchConfigurationDto })
  @ApiResponse({ status: 201, description: 'Created (no body)' })
  @ApiResponse({ status: 409, description: 'A configuration of that name exists' })
  async createSearch(
    @Param('kbid') kbid: string,
    @Param('config_name') name: string,
    @Body(bodyOf(SearchConfigurationDto)) body: SearchConfigurationDto,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(ContentSubjects.createSearchConfiguration, { kbid, name, body }, busContextOf(req));
  }

  @Patch('search_configurations/:config_name')
  @HttpCode(200)
  @ApiOperation({ summary: 'Update search configuration', description: 'Replaces the saved configuration.' })
  @ApiBody({ type: SearchConfigurationDto })
  @ApiResponse({ status: 200, description: 'Updated (no body)' })
  @ApiResponse({ status: 404, description: 'No such configuration' })
  async updateSearch(
    @Param('kbid') kbid: string,
    @Param('config_name') name: string,
    @Body(bodyOf(SearchConfigurationDto)) body: SearchConfigurationDto,
    @Req() req: AuthedRequest,
  ): Promise<void> {
    await this.bus.request(ContentSubjects.updateSearchConfiguration, { kbid, name, body }, busContextOf(req));
  }

  @Delete('search_configurations/:config_name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete search configuration' })
  @ApiResponse({ status: 204 })
  @ApiResponse({ status: 404, description: 'No such configuration' })
  async deleteSearch(@Param('kbid') kbid: string, @Param('config_name') name: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteSearchConfiguration, { kbid, name }, busContextOf(req));
  }

  @Get('kv-schemas')
  @ApiOperation({ summary: 'List key-value schemas' })
  @ApiResponse({ status: 200, type: KbKvSchemasDto })
  listKv(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbKvSchemasDto> {
    return this.bus.request(ContentSubjects.listKvSchemas, { kbid }, busContextOf(req));
  }

  @Post('kv-schemas')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a key-value schema',
    description: 'At most 20 schemas per KB and 50 keys per schema; the name is its id.',
  })
  @ApiBody({ type: KvSchemaDto })
  @ApiResponse({ status: 201, type: KvSchemaDto })
  @ApiResponse({ status: 409, description: 'A schema of that name exists' })
  createKv(@Param('kbid') kbid: string, @Body(bodyOf(KvSchemaDto)) body: KvSchemaDto, @Req() req: AuthedRequest): Promise<KvSchemaDto> {
    return this.bus.request(ContentSubjects.createKvSchema, { kbid, body }, busContextOf(req));
  }

  @Get('kv-schemas/:schema_id')
  @ApiOperation({ summary: 'Get a key-value schema' })
  @ApiResponse({ status: 200, type: KvSchemaDto })
  @ApiResponse({ status: 404, description: 'No such schema' })
  getKv(@Param('kbid') kbid: string, @Param('schema_id') schemaId: string, @Req() req: AuthedRequest): Promise<KvSchemaDto> {
    return this.bus.request(ContentSubjects.getKvSchema, { kbid, schema_id: schemaId }, busContextOf(req));
  }

  @Put('kv-schemas/:schema_id')
  @ApiOperation({ summary: 'Update a key-value schema', description: 'The members given (description, fields) replace the stored ones.' })
  @ApiBody({ type: UpdateKvSchemaDto })
  @ApiResponse({ status: 200, type: KvSchemaDto })
  @ApiResponse({ status: 404, description: 'No such schema' })
  updateKv(
    @Param('kbid') kbid: string,
    @Param('schema_id') schemaId: string,
    @Body(bodyOf(UpdateKvSchemaDto)) body: UpdateKvSchemaDto,
    @Req() req: AuthedRequest,
  ): Promise<KvSchemaDto> {
    return this.bus.request(ContentSubjects.updateKvSchema, { kbid, schema_id: schemaId, body }, busContextOf(req));
  }

  @Delete('kv-schemas/:schema_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a key-value schema' })
  @ApiResponse({ status: 204 })
  @ApiResponse({ status: 404, description: 'No such schema' })
  async deleteKv(@Param('kbid') kbid: string, @Param('schema_id') schemaId: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteKvSchema, { kbid, schema_id: schemaId }, busContextOf(req));
  }

  @Get('extract_strategies')
  @ApiOperation({ summary: 'List extract strategies', description: 'By id.' })
  @ApiResponse({ status: 200, schema: { type: 'object', additionalProperties: { $ref: getSchemaPath(ExtractStrategyDto) } } })
  listExtract(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Strategies> {
    return this.listStrategies('extract', kbid, req);
  }

  @Post('extract_strategies')
  @HttpCode(200)
  @Header('Content-Type', 'application/json')
  @ApiOperation({
    summary: 'Add an extract strategy',
    description: 'Fields name it by the returned id (`extract_strategy`); at most 50 per KB.',
  })
  @ApiBody({ type: ExtractStrategyDto })
  @ApiResponse({ status: 200, schema: { type: 'string', description: "The new strategy's id (JSON string)." } })
  createExtract(
    @Param('kbid') kbid: string,
    @Body(bodyOf(ExtractStrategyDto)) body: ExtractStrategyDto,
    @Req() req: AuthedRequest,
  ): Promise<string> {
    return this.createStrategy('extract', kbid, body, req);
  }

  @Get('extract_strategies/strategy/:strategy_id')
  @ApiOperation({ summary: 'Get an extract strategy' })
  @ApiResponse({ status: 200, type: ExtractStrategyDto })
  @ApiResponse({ status: 404, description: 'No such strategy' })
  getExtract(@Param('kbid') kbid: string, @Param('strategy_id') id: string, @Req() req: AuthedRequest): Promise<unknown> {
    return this.bus.request(ContentSubjects.getStrategy, { kbid, kind: 'extract', strategy_id: id }, busContextOf(req));
  }

  @Delete('extract_strategies/strategy/:strategy_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove an extract strategy', description: 'Fields naming it are processed with the defaults from then on.' })
  @ApiResponse({ status: 204 })
  @ApiResponse({ status: 404, description: 'No such strategy' })
  async deleteExtract(@Param('kbid') kbid: string, @Param('strategy_id') id: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteStrategy, { kbid, kind: 'extract', strategy_id: id }, busContextOf(req));
  }

  @Get('split_strategies')
  @ApiOperation({ summary: 'List split strategies', description: 'By id.' })
  @ApiResponse({ status: 200, schema: { type: 'object', additionalProperties: { $ref: getSchemaPath(SplitStrategyDto) } } })
  listSplit(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Strategies> {
    return this.listStrategies('split', kbid, req);
  }

  @Post('split_strategies')
  @HttpCode(200)
  @Header('Content-Type', 'application/json')
  @ApiOperation({
    summary: 'Add a split strategy',
    description: 'Fields name it by the returned id (`split_strategy`); at most 50 per KB.',
  })
  @ApiBody({ type: SplitStrategyDto })
  @ApiResponse({ status: 200, schema: { type: 'string', description: "The new strategy's id (JSON string)." } })
  createSplit(
    @Param('kbid') kbid: string,
    @Body(bodyOf(SplitStrategyDto)) body: SplitStrategyDto,
    @Req() req: AuthedRequest,
  ): Promise<string> {
    return this.createStrategy('split', kbid, body, req);
  }

  @Get('split_strategies/strategy/:strategy_id')
  @ApiOperation({ summary: 'Get a split strategy' })
  @ApiResponse({ status: 200, type: SplitStrategyDto })
  @ApiResponse({ status: 404, description: 'No such strategy' })
  getSplit(@Param('kbid') kbid: string, @Param('strategy_id') id: string, @Req() req: AuthedRequest): Promise<unknown> {
    return this.bus.request(ContentSubjects.getStrategy, { kbid, kind: 'split', strategy_id: id }, busContextOf(req));
  }

  @Delete('split_strategies/strategy/:strategy_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a split strategy', description: 'Fields naming it are processed with the defaults from then on.' })
  @ApiResponse({ status: 204 })
  @ApiResponse({ status: 404, description: 'No such strategy' })
  async deleteSplit(@Param('kbid') kbid: string, @Param('strategy_id') id: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(ContentSubjects.deleteStrategy, { kbid, kind: 'split', strategy_id: id }, busContextOf(req));
  }

  private listStrategies(kind: StrategyKind, kbid: string, req: AuthedRequest): Promise<Strategies> {
    return this.bus.request(ContentSubjects.listStrategies, { kbid, kind }, busContextOf(req));
  }

  /** The reference answers with the id as a JSON string. */
  private async createStrategy(
    kind: StrategyKind,
    kbid: string,
    body: SplitStrategyDto | ExtractStrategyDto,
    req: AuthedRequest,
  ): Promise<string> {
    const { id } = await this.bus.request(ContentSubjects.createStrategy, { kbid, kind, body }, busContextOf(req));
    return JSON.stringify(id);
  }
}
