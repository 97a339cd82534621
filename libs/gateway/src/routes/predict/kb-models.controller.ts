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
      '`{<provider>: [<model id>]}`: `builtin` (the extractive model) and the provider entry of `user_keys` serving the configured generative model.',
  })
  @ApiResponse({ status: 200, schema: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } })
  async generativeProviders(@Param('kbid') kbid: string, @Req() req: AuthedRequest): Promise<Record<string, string[]>> {
    return (await this.bus.request(ContentSubjects.predictModels, { kbid }, busContextOf(req))).generative_providers;
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
