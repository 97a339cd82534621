import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/** A zone (API-MAP 0.2: the `{zone}` of a zone host) where Knowledge Boxes live. */
export class ZoneDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
  @ApiProperty() title!: string;
  @ApiProperty({ description: 'The host prefix of the zone (`{zone}.<domain>`)' }) subdomain!: string;
}

/** Zones known to the deployment, or (with `account_id`) those an account uses and may use. */
export class ListZonesRequest {
  @IsOptional() @IsString() account_id?: string;
}

/** `GET /account/{id}/index/kbs`: which zone each KB the caller sees lives in. */
export class KbIndexDto {
  @ApiProperty() account_id!: string;
  @ApiProperty() kb_id!: string;
  @ApiProperty() zone_id!: string;
}

/** `GET /account/{id}/status`: whether the account is ready to use (ours are, once created). */
export class AccountStatusDto {
  @ApiProperty() available!: boolean;
}

/** `GET /account/{id}/permissions`: the caller's role on the account. */
export class AccountPermissionsDto {
  @ApiProperty() account_id!: string;
  @ApiProperty({ enum: ['AOWNER', 'AMEMBER'] }) role!: string;
  @ApiProperty() can_manage_account!: boolean;
}

/** `GET /account/{id}/kb/{kb}/permissions`: the caller's role on the KB and the route roles it grants. */
export class KbPermissionsDto {
  @ApiProperty() account_id!: string;
  @ApiProperty() kb_id!: string;
  @ApiProperty({ enum: ['SOWNER', 'SCONTRIBUTOR', 'SMEMBER'] }) role!: string;
  @ApiProperty({ type: [String], enum: ['READER', 'WRITER', 'MANAGER'], isArray: true }) permissions!: string[];
}
