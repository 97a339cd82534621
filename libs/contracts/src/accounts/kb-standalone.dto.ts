import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { KbRoles, type KbRole } from '../common/principal';
import { CreateKnowledgeBoxDto, KnowledgeBoxDto, KnowledgeBoxSummaryDto } from './kb.dto';

/**
 * The standalone KB routes (`/api/v1/kbs`, `/api/v1/kb/{kbid}`, `/api/v1/kb/s/{slug}`): the paths the
 * reference system's database SDK and admin app call, acting in the caller's accounts.
 */
export class CreateStandaloneKnowledgeBoxDto extends CreateKnowledgeBoxDto {
  @ApiPropertyOptional({
    description: 'Account (id or slug) to create the Knowledge Box in; needed only when the caller owns no account or several.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  account_id?: string;
}

/** 201 of `POST /api/v1/kbs` and 200 of `PATCH /api/v1/kb/{kbid}` (the reference's KnowledgeBoxObjID). */
export class KbIdentityDto {
  @ApiProperty() uuid!: string;
  @ApiProperty() slug!: string;
}

/** The KB record (spec 2.6) with the reference's `uuid` member. */
export class StandaloneKnowledgeBoxDto extends KnowledgeBoxDto {
  @ApiProperty() uuid!: string;
}

export class StandaloneKbSummaryDto extends KnowledgeBoxSummaryDto {
  @ApiProperty() uuid!: string;
  @ApiProperty() account_id!: string;
}

export class StandaloneKbListDto {
  @ApiProperty({ type: [StandaloneKbSummaryDto] }) kbs!: StandaloneKbSummaryDto[];
}

/**
 * Who is asking, as the gateway resolved it: a user (`user_id`), or an API key (`kb_id` of its one KB
 * and `key_role`). Set by the gateway from the Principal, never from a caller's input.
 */
export class KbCaller {
  @IsOptional() @IsString() user_id?: string;
  @IsOptional() @IsString() kb_id?: string;
  @IsOptional() @IsIn(KbRoles) key_role?: KbRole;
}

export class CreateKbForCallerRequest {
  @IsDefined() @IsString() user_id!: string;
  @IsDefined() @ValidateNested() @Type(() => CreateStandaloneKnowledgeBoxDto) body!: CreateStandaloneKnowledgeBoxDto;
}

export class KbBySlugRequest extends KbCaller {
  @IsDefined() @IsString() @MaxLength(250) slug!: string;
}
