import { Controller, Get, Inject, Param, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ContentSubjects, DomainError, ErrorCodes, KbModelDto, type PredictModelsDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../../auth/auth.guard';
import { busContextOf } from '../../http/request-context';

/** The KB's models as a list: its generative model first, then its semantic models (the default first). */
export function kbModels(m: PredictModelsDto): KbModelDto[] {
  return [
    {
      model_id: m.generative,
      model_type: 'generative',
      title: m.generative === 'extractive' ? 'Built-in extractive answers' : m.generative,
      default: true,
    },
    ...m.semantic.map((id, i): KbModelDto => ({ model_id: id, model_type: 'semantic', title: id, default: i === 0 })),
  ];
}

const PROVIDER_TITLES: Record<string, string> = {
  builtin: 'Built-in',
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  azure_openai: 'Azure OpenAI',
  azure: 'Azure OpenAI',
  openai_compat: 'OpenAI-compatible',
  openai_compatible: 'OpenAI-compatible',
};

/** One generative model as the reference JS SDK's `ModelInfo` has it (what is known of it here: its id and that it streams). */
interface GenerativeModelInfo {
  name: string;
  title: string;
  config: Record<string, never>;
  features: { streaming: true };
  metadata: Record<string, never>;
}

/** `GET /generative_providers`: the reference JS SDK's `{providers: {<provider>: {title, enterprise_readiness, models}}}`. */
export function generativeProviders(byProvider: Record<string, string[]>): {
  providers: Record<string, { title: string; enterprise_readiness: boolean; models: Record<string, GenerativeModelInfo> }>;
} {
  const providers = Object.fromEntries(
    Object.entries(byProvider).map(([provider, ids]) => [
      provider,
      {
        title: PROVIDER_TITLES[provider] ?? provider,
        // The built-in model runs in this service: no data leaves it.
        enterprise_readiness: provider === 'builtin',
        models: Object.fromEntries(
          ids.map((id): [string, GenerativeModelInfo] => [
            id,
            {
              name: id,
              title: id === 'extractive' ? 'Built-in extractive answers' : id,
              config: {},
              features: { streaming: true },
              metadata: {},
            },
          ]),
        ),
      },
    ]),
  );
  return { providers };
}

const MODEL_INFO_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    title: { type: 'string' },
    config: { type: 'object' },
    features: { type: 'object', properties: { streaming: { type: 'boolean' } } },
    metadata: { type: 'object' },
  },
  required: ['name', 'title', 'config', 'features', 'metadata'],
};

/**
 * The models a KB offers (API-MAP 3 "KB configuration services"): `generative_providers` (the
 * generative models it can use, by provider) and `models` / `model/{model_id}` (its configured
 * models). No model is trained here, so these are the models of its learning configuration.
 */
@ApiTags('Predict')
@Controller('api/v1/kb/:kbid')
export class KbModelsController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Get('generative_providers')
  @ApiOperation({
    summary: 'Generative models of the KB by provider',
    description:
      '`{providers: {<provider>: {title, enterprise_readiness, models: {<model id>: {name, title, config, features, metadata}}}}}` ' +
      "(the reference JS SDK's `GenerativeProviders`): `builtin` (the extractive model) and the provider entry of `user_keys` serving the configured generative model.",
  })
  @ApiResponse({
    status: 200,
    schema: {
      type: 'object',
      properties: {
        providers: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: {
              title: { type: 'string' },
              enterprise_readiness: { type: 'boolean' },
              models: { type: 'object', additionalProperties: MODEL_INFO_SCHEMA },
            },
            required: ['title', 'enterprise_readiness', 'models'],
          },
        },
      },
      required: ['providers'],
    },
  })
  async generativeProviders(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<ReturnType<typeof generativeProviders>> {
    return generativeProviders((await this.bus.request(ContentSubjects.predictModels, { kbid }, busContextOf(req))).generative_providers);
  }

  @Get('models')
  @ApiOperation({ summary: 'Models of the KB', description: 'Its generative model, then its semantic models (the default first).' })
  @ApiResponse({ status: 200, type: [KbModelDto] })
  async models(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<KbModelDto[]> {
    return kbModels(await this.bus.request(ContentSubjects.predictModels, { kbid }, busContextOf(req)));
  }

  @Get('model/:model_id')
  @ApiOperation({ summary: 'One model of the KB' })
  @ApiResponse({ status: 200, type: KbModelDto })
  @ApiResponse({ status: 404, description: 'The KB has no such model' })
  async model(@Param('kbid') kbid: string, @Param('model_id') modelId: string, @Req() req: AuthedRequest): Promise<KbModelDto> {
    const found = kbModels(await this.bus.request(ContentSubjects.predictModels, { kbid }, busContextOf(req))).find(
      (m) => m.model_id === modelId,
    );
    if (!found) throw new DomainError(ErrorCodes.NOT_FOUND, `This knowledge box has no model ${modelId.slice(0, 256)}`);
    return found;
  }
}
