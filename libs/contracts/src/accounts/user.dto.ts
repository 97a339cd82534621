import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsEmail, IsISO8601, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';

export const MIN_PASSWORD_LENGTH = 10;

export class SignUpDto {
  @ApiProperty() @IsDefined() @IsEmail({ require_tld: false }) @MaxLength(320) email!: string;
  @ApiProperty({ minLength: MIN_PASSWORD_LENGTH })
  @IsDefined()
  @IsString()
  @MinLength(MIN_PASSWORD_LENGTH)
  @MaxLength(1024)
  password!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) name?: string;
}

export class SignInDto {
  @ApiProperty() @IsDefined() @IsEmail({ require_tld: false }) @MaxLength(320) email!: string;
  @ApiProperty() @IsDefined() @IsString() @MaxLength(1024) password!: string;
}

export class UserTokenDto {
  @ApiProperty({ description: 'Short-lived signed user token: send as `Authorization: Bearer <token>`' }) token!: string;
  @ApiProperty() expires!: string;
  @ApiProperty() user_id!: string;
}

/** Where the link that proves the user reads their mailbox went. */
export class EmailVerificationDto {
  @ApiProperty() email!: string;
  @ApiProperty({ description: 'true when the link was e-mailed' }) sent!: boolean;
  @ApiPropertyOptional({ description: 'Present only when no mail server is configured: the link itself' }) verify_url?: string;
}

export class SignedUpDto extends UserTokenDto {
  @ApiProperty({ type: EmailVerificationDto }) email_verification!: EmailVerificationDto;
}

export class EmailVerifiedDto {
  @ApiProperty() user_id!: string;
  @ApiProperty() email!: string;
}

export class ModifyUserDto {
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(256) name?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(8192) avatar?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsEmail() @MaxLength(320) email?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) @IsOptional() @IsString() @MaxLength(16) language?: string | null;
}

export class UserPreferencesDto {
  @ApiPropertyOptional({ type: String, nullable: true }) last_login!: string | null;
  @ApiProperty() email!: string;
  @ApiProperty() name!: string;
  @ApiProperty() type!: string;
  @ApiPropertyOptional({ type: String, nullable: true }) language!: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) avatar!: string | null;
}

export class DependantAccountDto {
  @ApiProperty() id!: string;
  @ApiProperty() slug!: string;
}

export class UserProfileDto {
  @ApiProperty({ type: UserPreferencesDto }) preferences!: UserPreferencesDto;
  @ApiProperty({ type: [String] }) accounts!: string[];
  @ApiProperty() create!: boolean;
  @ApiProperty() can_be_deleted!: boolean;
  @ApiProperty({ type: [DependantAccountDto] }) dependant_accounts!: DependantAccountDto[];
}

export class CreatePersonalTokenDto {
  @ApiProperty() @IsDefined() @IsString() @MaxLength(512) description!: string;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true }) @IsOptional() @IsISO8601({ strict: true }) expiration_date?:
    string | null;
}

export class PersonalTokenCreatedDto {
  @ApiProperty() id!: string;
  @ApiProperty({ description: 'Shown once; only a salted hash is stored.' }) token!: string;
  @ApiProperty() expires!: string;
}

export class PersonalTokenDto {
  @ApiProperty() id!: string;
  @ApiProperty() description!: string;
  @ApiProperty() created!: string;
  @ApiProperty() expires!: string;
}

/** Bus requests. */
export class UserRef {
  @IsDefined() @IsString() user_id!: string;
}

export class SignInRequest {
  @IsDefined() @ValidateNested() @Type(() => SignInDto) body!: SignInDto;
  /** Caller address, for the failed-attempt limit. */
  @IsOptional() @IsString() @MaxLength(128) ip?: string;
}

export class SignUpRequest {
  @IsDefined() @ValidateNested() @Type(() => SignUpDto) body!: SignUpDto;
}

export class ModifyUserRequest extends UserRef {
  @IsDefined() @ValidateNested() @Type(() => ModifyUserDto) body!: ModifyUserDto;
}

export class CreatePersonalTokenRequest extends UserRef {
  @IsDefined() @ValidateNested() @Type(() => CreatePersonalTokenDto) body!: CreatePersonalTokenDto;
}

export class PersonalTokenRef extends UserRef {
  @IsDefined() @IsString() token_id!: string;
}

export class VerifyEmailRequest {
  /** The signed token of a verification link. */
  @IsDefined() @IsString() @MaxLength(4096) token!: string;
}
