import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  AccountsSubjects,
  CreatePersonalTokenDto,
  EmailVerificationDto,
  ModifyUserDto,
  PersonalTokenCreatedDto,
  PersonalTokenDto,
  SignInDto,
  SignUpDto,
  SignedUpDto,
  UserProfileDto,
  UserTokenDto,
} from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import type { AuthedRequest } from '../auth/auth.guard';
import { clientKey } from '../http/client-rate-limit';
import { bodyOf } from '../http/dto.pipe';
import { busContextOf } from '../http/request-context';
import { AnswersJsonNull } from '../http/json-null';

const userOf = (req: AuthedRequest): string => req.principal?.user_id ?? '';

/** The signed-in user (global host): profile, personal access tokens, and JSON sign-up/sign-in. */
@ApiTags('User')
@Controller('api/v1')
export class UserController {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  @Post('auth/signup')
  @ApiOperation({ summary: 'Sign up with e-mail and password; returns a user token and mails a link that verifies the address' })
  @ApiResponse({ status: 201, type: SignedUpDto })
  signUp(@Body(bodyOf(SignUpDto)) body: SignUpDto, @Req() req: AuthedRequest): Promise<SignedUpDto> {
    return this.bus.request(AccountsSubjects.signUp, { body }, busContextOf(req));
  }

  @Post('auth/login')
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign in with e-mail and password; returns a short-lived user token' })
  @ApiResponse({ status: 200, type: UserTokenDto })
  signIn(@Body(bodyOf(SignInDto)) body: SignInDto, @Req() req: AuthedRequest): Promise<UserTokenDto> {
    return this.bus.request(AccountsSubjects.signIn, { body, ip: clientKey(req.ip ?? '') }, busContextOf(req));
  }

  @Get('user')
  @ApiOperation({ summary: 'Get Authenticated User' })
  @ApiResponse({ status: 200, type: UserProfileDto })
  profile(@Req() req: AuthedRequest): Promise<UserProfileDto> {
    return this.bus.request(AccountsSubjects.getUser, { user_id: userOf(req) }, busContextOf(req));
  }

  @Patch('user')
  @ApiOperation({ summary: 'Modify User Profile' })
  @AnswersJsonNull('Changed: JSON null')
  modify(@Body(bodyOf(ModifyUserDto)) body: ModifyUserDto, @Req() req: AuthedRequest): Promise<null> {
    return this.bus.request(AccountsSubjects.modifyUser, { user_id: userOf(req), body }, busContextOf(req));
  }

  @Delete('user')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete the authenticated user (refused while the only owner of an account)' })
  async delete(@Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deleteUser, { user_id: userOf(req) }, busContextOf(req));
  }

  @Post('user/verify_email')
  @HttpCode(200)
  @ApiOperation({ summary: 'Send a new link that verifies the e-mail address of the signed-in user' })
  @ApiResponse({ status: 200, type: EmailVerificationDto })
  @ApiResponse({ status: 409, description: 'The address is already verified' })
  sendVerification(@Req() req: AuthedRequest): Promise<EmailVerificationDto> {
    return this.bus.request(AccountsSubjects.sendEmailVerification, { user_id: userOf(req) }, busContextOf(req));
  }

  @Post('user/pa_tokens')
  @ApiOperation({ summary: 'Create Token (personal access token)' })
  @ApiResponse({ status: 201, type: PersonalTokenCreatedDto })
  createToken(
    @Body(bodyOf(CreatePersonalTokenDto)) body: CreatePersonalTokenDto,
    @Req() req: AuthedRequest,
  ): Promise<PersonalTokenCreatedDto> {
    return this.bus.request(AccountsSubjects.createPersonalToken, { user_id: userOf(req), body }, busContextOf(req));
  }

  @Get('user/pa_tokens')
  @ApiOperation({ summary: 'List personal access tokens' })
  @ApiResponse({ status: 200, type: [PersonalTokenDto] })
  listTokens(@Req() req: AuthedRequest): Promise<PersonalTokenDto[]> {
    return this.bus.request(AccountsSubjects.listPersonalTokens, { user_id: userOf(req) }, busContextOf(req));
  }

  @Delete('user/pa_token/:token_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a personal access token (it stops working at once)' })
  async deleteToken(@Param('token_id') tokenId: string, @Req() req: AuthedRequest): Promise<void> {
    await this.bus.request(AccountsSubjects.deletePersonalToken, { user_id: userOf(req), token_id: tokenId }, busContextOf(req));
  }
}
