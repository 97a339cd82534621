import { Body, Controller, Inject, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AccountsSubjects, CreateTemporalKeyDto, TemporalKeyDto } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';

@ApiTags('Service accounts')
@Controller('api/v1')
export class TemporalKeyController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('service_account_temporal_key')
  @ApiOperation({
    summary: 'Create Temporal Secure Token',
    description:
      'With an API key (X-SVC-SERVICEACCOUNT). Lives at most 10 s. Without security_groups it acts as its parent key; with them it opens only the /ask endpoints.',
  })
  @ApiResponse({ status: 201, type: TemporalKeyDto })
  create(@Body(bodyOf(CreateTemporalKeyDto)) body: CreateTemporalKeyDto, @Req() req: AuthedRequest): Promise<TemporalKeyDto> {
    return this.bus.request(
      AccountsSubjects.createTemporalKey,
      { parent_key_id: req.principal?.credential_id ?? '', body },
      busContextOf(req),
    );
  }
}
