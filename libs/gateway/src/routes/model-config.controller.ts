import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  AddModelToKbDto,
  DomainError,
  ErrorCodes,
  KbVectorsetsDto,
  ModelConfigurationInputDto,
  modelFileKey,
} from '@kb/contracts';
import { BLOB_STORE, type BlobStore } from '@kb/platform/storage';
import { sendBlob } from '../http/blob-response';
import { bodyOf } from '../http/dto.pipe';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { busContextOf } from '../http/request-context';

const objectBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw DomainError.validation([{ loc: ['body'], msg: 'Input should be a valid object', type: 'model_type' }]);
  return body as Record<string, unknown>;
};

/** Learning configuration schema and per-KB model configuration (spec 4.5–4.6). */
@ApiTags('Model configuration')
@Controller('api/v1')
export class ModelConfigController {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  // `schema` is the understanding API's alias, `nua/schema` the database's proxy of it (API-MAP 1.5).
  @Get(['learning/configuration/schema', 'schema', 'nua/schema'])
  @ApiOperation({ summary: 'Learning Configuration Schema (for creation)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  schema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get('account/:account_id/schema')
  @ApiOperation({ summary: 'Learning Configuration Schema (by account)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  accountSchema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get(['kb/:kbid/schema', 'schema/:kbid'])
  @ApiOperation({ summary: 'Learning Configuration Schema (by KB, for update)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  kbSchema(@Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.learningSchema, {}, busContextOf(req));
  }

  @Get(['kb/:kbid/configuration', 'config/:kbid'])
  @ApiOperation({ summary: 'Knowledgebox Models Configuration (provider keys masked)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  get(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    return this.bus.request(AccountsSubjects.getKbConfig, { kb_id: kbid }, busContextOf(req));
  }

  @Post('kb/:kbid/configuration')
  @HttpCode(204)
  @ApiOperation({ summary: 'Knowledgebox Models Add Configuration' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 204 })
  async add(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'add', config: objectBody(body) }, busContextOf(req));
  }

  @Get('kb/:kbid/vectorsets')
  @ApiOperation({
    summary: 'Vectorsets (semantic models) of the Knowledge Box',
    description: 'Each semantic model with the name its vectors are stored and searched under, and which is the default.',
  })
  @ApiResponse({ status: 200, type: KbVectorsetsDto })
  vectorsets(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbVectorsetsDto> {
    return this.bus.request(AccountsSubjects.listVectorsets, { kb_id: kbid }, busContextOf(req));
  }

  @Post('kb/:kbid/vectorsets/:vectorset_id')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Add a vectorset (semantic model) to the Knowledge Box',
    description:
      'Adds a semantic model of the learning configuration schema (its provider needs `user_keys`). The content already in the KB is processed again in the background so every paragraph gets its vectors; new content gets them at once. Adding a model the KB has changes nothing.',
  })
  @ApiResponse({ status: 201, type: KbVectorsetsDto })
  addVectorset(@Param('kbid') kbid: string, @Param('vectorset_id') model: string, @Req() req: AuthedRequest): Promise<KbVectorsetsDto> {
    return this.bus.request(AccountsSubjects.addSemanticModel, { kb_id: kbid, model }, busContextOf(req));
  }

  @Delete('kb/:kbid/vectorsets/:vectorset_id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove a vectorset (semantic model) from the Knowledge Box',
    description: 'Its vectors leave the index. The default semantic model cannot be removed (409).',
  })
  @ApiResponse({ status: 204 })
  async removeVectorset(@Param('kbid') kbid: string, @Param('vectorset_id') model: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.removeSemanticModel, { kb_id: kbid, model }, busContextOf(req));
  }

  /** The understanding API's paths of the configuration (API-MAP 1.5): 200 with the configuration, where the database's answer 204. */
  @Post('config/:kbid')
  @HttpCode(200)
  @ApiOperation({ summary: 'Knowledgebox Models Add Configuration (understanding-API path)' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 200, description: 'the model configuration (provider keys masked)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  async addNua(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'add', config: objectBody(body) }, busContextOf(req));
    return this.bus.request(AccountsSubjects.getKbConfig, { kb_id: kbid }, busContextOf(req));
  }

  @Patch('config/:kbid')
  @ApiOperation({ summary: 'Knowledgebox Models Update Configuration (understanding-API path)' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 200, description: 'the model configuration (provider keys masked)' })
  // eslint-disable-next-line no-restricted-syntax -- issue 18, open: the learning schema (a JSON Schema) and the model configuration are not yet declared as DTOs
  async updateNua(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<Record<string, unknown>> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'update', config: objectBody(body) }, busContextOf(req));
    return this.bus.request(AccountsSubjects.getKbConfig, { kb_id: kbid }, busContextOf(req));
  }

  @Delete('account/:account_id/models/:kb_id/:model_id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete a model from a Kb',
    description: 'The account-layer form of removing a vectorset; the default semantic model cannot be removed (409).',
  })
  @ApiResponse({ status: 200, description: 'null' })
  async deleteModel(
    @Param('kb_id') kbid: string,
    @Param('model_id') model: string,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.bus.request(AccountsSubjects.removeSemanticModel, { kb_id: kbid, model }, busContextOf(req));
    res.status(200).json(null);
  }

  // `models/:kbid` is the on-premises form (API-MAP 1.5), the KB in the path alone.
  @Post('models/:kbid')
  @HttpCode(200)
  @ApiOperation({ summary: 'Add A Model To A Kb (on-premises path)' })
  @ApiBody({ type: AddModelToKbDto })
  @ApiResponse({ status: 200, description: 'null' })
  async addModelOnPrem(
    @Param('kbid') kbid: string,
    @Body(bodyOf(AddModelToKbDto)) body: AddModelToKbDto,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.bus.request(AccountsSubjects.addSemanticModel, { kb_id: kbid, model: body.id }, busContextOf(req));
    res.status(200).json(null);
  }

  @Post('account/:account_id/models/:kb_id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add A Model To A Kb',
    description: 'The account-layer form of adding a vectorset: `id` names a semantic model of the learning configuration schema.',
  })
  @ApiBody({ type: AddModelToKbDto })
  @ApiResponse({ status: 200, description: 'null' })
  async addModel(
    @Param('kb_id') kbid: string,
    @Body(bodyOf(AddModelToKbDto)) body: AddModelToKbDto,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.bus.request(AccountsSubjects.addSemanticModel, { kb_id: kbid, model: body.id }, busContextOf(req));
    // A JSON null, as the spec answers (Nest would send an empty body).
    res.status(200).json(null);
  }

  @Get('download/:kbid/model/:model_id/:filename')
  @ApiOperation({
    summary: 'Download Account Predictive Model File',
    description:
      "A file of a model the Knowledge Box uses, for running it elsewhere: the built-in semantic model (`en-use-lite-2024`) has `model.json`, `vocab.json` and its weight shards `group1-shard<n>of7` (TensorFlow.js graph). `account_id` must be the KB's account. Provider models have no files here (404). Range requests are honoured.",
  })
  @ApiQuery({ name: 'account_id', required: true })
  @ApiResponse({ status: 200, description: 'the file' })
  async downloadModelFile(
    @Param('kbid') kbid: string,
    @Param('model_id') modelId: string,
    @Param('filename') filename: string,
    @Query('account_id') accountId: unknown,
    @Req() req: AuthedRequest,
    @Res() res: Response,
  ): Promise<void> {
    if (typeof accountId !== 'string' || !accountId)
      throw DomainError.validation([{ loc: ['query', 'account_id'], msg: 'Field required', type: 'missing' }]);
    const ctx = busContextOf(req);
    // The KB must be one of that account's (404 otherwise), and the model one of the KB's.
    await this.bus.request(AccountsSubjects.getKb, { account_id: accountId, kb_id: kbid }, ctx);
    const { vectorsets } = await this.bus.request(AccountsSubjects.listVectorsets, { kb_id: kbid }, ctx);
    if (!vectorsets.some((v) => v.id === modelId) || !/^[A-Za-z0-9._-]{1,200}$/.test(filename)) {
      throw new DomainError(ErrorCodes.NOT_FOUND, `The Knowledge Box has no model file ${modelId}/${filename}`);
    }
    await sendBlob(this.blobs, req, res, { key: modelFileKey(modelId, filename), filename, inline: false });
  }

  @Patch('kb/:kbid/configuration')
  @HttpCode(204)
  @ApiOperation({ summary: 'Knowledgebox Models Update Configuration (no semantic model changes)' })
  @ApiBody({ type: ModelConfigurationInputDto })
  @ApiResponse({ status: 204 })
  async update(@Param('kbid') kbid: string, @Body() body: unknown, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.setKbConfig, { kb_id: kbid, mode: 'update', config: objectBody(body) }, busContextOf(req));
  }
}
