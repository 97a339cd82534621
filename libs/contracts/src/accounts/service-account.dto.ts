import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsISO8601, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { KbRoles, type KbRole } from '../common/principal';
import { KbRef } from './kb.dto';

export class CreateServiceAccountDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(250) title?: string;
  @ApiProperty({ enum: KbRoles }) @IsDefined() @IsIn(KbRoles) role!: KbRole;
}

export class CreateServiceAccountKeyDto {
  @ApiProperty({ format: 'date-time' }) @IsDefined() @IsISO8601({ strict: true }) expires!: string;
}

export class ServiceAccountKeyDto {
  @ApiProperty() id!: string;
  @ApiProperty() created!: string;
  @ApiProperty() expires!: string;
}

export class ServiceAccountDto {
  @ApiProperty() id!: string;
  @ApiProperty() title!: string;
  @ApiProperty({ enum: KbRoles }) role!: KbRole;
  @ApiProperty({ type: [ServiceAccountKeyDto] }) keys!: ServiceAccountKeyDto[];
}

export class ServiceAccountKeyCreatedDto {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'Shown once; only a salted hash is stored.' }) token!: string;
}

export class CreateServiceAccountRequest extends KbRef {
  @IsDefined() @ValidateNested() @Type(() => CreateServiceAccountDto) body!: CreateServiceAccountDto;
}

export class ServiceAccountRef extends KbRef {
  @IsDefined() @IsString() sa_id!: string;
}

export class CreateServiceAccountKeyRequest extends ServiceAccountRef {
  @IsDefined() @ValidateNested() @Type(() => CreateServiceAccountKeyDto) body!: CreateServiceAccountKeyDto;
}

export class ServiceAccountKeyRef extends ServiceAccountRef {
  @IsDefined() @IsString() key_id!: string;
}
