import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { KbRoles, type KbRole } from '../common/principal';
import { AccountCallerRef } from './account.dto';
import { KbRef } from './kb.dto';

export class KbUserChangeDto {
  @ApiProperty() @IsDefined() @IsString() id!: string;
  @ApiProperty({ enum: KbRoles }) @IsDefined() @IsIn(KbRoles) role!: KbRole;
}

export class UpdateKbUsersDto {
  @ApiPropertyOptional({ type: [KbUserChangeDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => KbUserChangeDto)
  add?: KbUserChangeDto[];
  @ApiPropertyOptional({ type: [KbUserChangeDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => KbUserChangeDto)
  update?: KbUserChangeDto[];
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(500) @IsString({ each: true }) delete?: string[];
}

export class InviteToKbDto {
  @ApiProperty() @IsDefined() @IsEmail() @MaxLength(320) email!: string;
  @ApiProperty({ enum: KbRoles }) @IsDefined() @IsIn(KbRoles) role!: KbRole;
}

export class KbUserDto {
  @ApiProperty() id!: string;
  @ApiProperty({ enum: KbRoles }) role!: KbRole;
  @ApiPropertyOptional() email?: string;
  @ApiPropertyOptional() name?: string;
}

export class InvitedUserDto {
  @ApiProperty() email!: string;
  @ApiProperty() role!: string;
  @ApiProperty() expires!: string;
}

export class AcceptInviteDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(4096) token!: string;
}

export class InviteAcceptedDto {
  @ApiProperty() account_id!: string;
  @ApiPropertyOptional() kb_id?: string;
  @ApiProperty() role!: string;
}

export class ListKbUsersRequest extends KbRef {
  @IsOptional() @IsBoolean() include_user_detail?: boolean;
}

export class UpdateKbUsersRequest extends KbRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateKbUsersDto) body!: UpdateKbUsersDto;
}

export class InviteToKbRequest extends KbRef {
  @IsOptional() @IsString() invited_by?: string;
  @IsDefined() @ValidateNested() @Type(() => InviteToKbDto) body!: InviteToKbDto;
}

export class DeleteKbInviteRequest extends KbRef {
  @IsDefined() @IsEmail() email!: string;
}

export class DeleteAccountInviteRequest extends AccountCallerRef {
  @IsDefined() @IsEmail() email!: string;
}

export class AcceptInviteRequest {
  @IsDefined() @IsString() user_id!: string;
  @IsDefined() @IsString() @MaxLength(4096) token!: string;
}
