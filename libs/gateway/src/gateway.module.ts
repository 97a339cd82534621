import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { AccessClient } from './auth/access-client';
import { CorsPolicy } from './cors/cors-policy';
import { ACCESS_CLIENT, AuthGuard } from './auth/auth.guard';
import { KbsController } from './routes/kbs.controller';
import { KbsStandaloneController } from './routes/kbs-standalone.controller';
import { ResourcesController } from './routes/resources.controller';
import { SearchController } from './routes/search.controller';
import { AskController } from './routes/ask.controller';
import { ActivityController } from './routes/activity.controller';
import { UsageController } from './routes/usage.controller';
import { BlockingView } from './quota/blocking-view';
import { BLOCKING_VIEW, QuotaGuard } from './quota/quota.guard';
import { RemiController } from './routes/remi.controller';
import { PredictController } from './routes/predict/predict.controller';
import { PredictCompatController } from './routes/predict/predict-compat.controller';
import { KbModelsController } from './routes/predict/kb-models.controller';
import { PredictUsage } from './routes/predict/predict-usage';
import { ActivityDownloadsController } from './routes/activity-downloads.controller';
import { PresignedBlobsController } from './routes/presigned-blobs.controller';
import { ServiceAccountsController } from './routes/service-accounts.controller';
import { AuthPageController } from './routes/auth-page.controller';
import { UserController } from './routes/user.controller';
import { TemporalKeyController } from './routes/temporal-key.controller';
import { AccountsController } from './routes/accounts.controller';
import { KbUsersController } from './routes/kb-users.controller';
import { InvitePageController } from './routes/invite-page.controller';
import { NuaClientsController } from './routes/nua-clients.controller';
import { ModelConfigController } from './routes/model-config.controller';
import { SamlController } from './routes/saml.controller';
import { SamlDomainsController } from './routes/saml-domains.controller';
import { VerifyEmailPageController } from './routes/verify-email-page.controller';
import { UploadsController } from './routes/uploads.controller';
import { FieldsController } from './routes/fields.controller';
import { LabelSetsController } from './routes/labelsets.controller';
import { EntitiesGroupsController } from './routes/entities-groups.controller';
import { AccountInfoController } from './routes/account-info.controller';
import { ProcessingRequestsController, ProcessingStatusController } from './routes/processing-status.controller';
import { ProcessingPullController } from './routes/processing-pull.controller';
import { SynonymsController } from './routes/synonyms.controller';
import { KbConfigController } from './routes/kb-config.controller';
import { ProcessingUploadsController } from './routes/processing-uploads.controller';
import { TusController } from './routes/tus.controller';
import { ProcessingUploadService } from './uploads/processing-upload.service';
import { StagedUploadsSweeper } from './uploads/staged-uploads.sweeper';
import { TusService } from './uploads/tus.service';
import { UploadService } from './uploads/upload.service';
import { KbArchivesService } from './uploads/kb-archives.service';
import { KbTransfersController } from './routes/kb-transfers.controller';
import { AccountBackupsController } from './routes/account-backups.controller';
import { NotificationsController } from './routes/notifications.controller';
import { EphemeralTokensController } from './routes/ephemeral-tokens.controller';
import {
  DEFAULT_NOTIFICATION_LIMITS,
  NOTIFICATION_LIMITS,
  NotificationsHub,
  type NotificationLimits,
} from './notifications/notifications-hub';

export interface GatewayOptions {
  /** Seconds a verified credential is reused before asking accounts again (revocation evicts at once). */
  accessCacheTtlSeconds: number;
  /** Browser origins allowed on routes that are not a KB's (those follow the KB's allowed_origins). */
  corsOrigins?: string[];
  /** Limits of the live notification streams (defaults: DEFAULT_NOTIFICATION_LIMITS). */
  notifications?: Partial<NotificationLimits>;
  /** How often the blocks of exhausted usage limits are fetched whole (changes also arrive as events). */
  blockingRefreshMs?: number;
}

export const CORS_POLICY = Symbol('CORS_POLICY');

/** The HTTP edge: public routes, the one access decision, and thin adapters onto the bus. */
@Module({})
export class GatewayModule {
  static forRoot(options: GatewayOptions): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [
        AuthPageController,
        InvitePageController,
        VerifyEmailPageController,
        SamlController,
        SamlDomainsController,
        UserController,
        AccountsController,
        AccountInfoController,
        KbsController,
        KbsStandaloneController,
        KbUsersController,
        NuaClientsController,
        ServiceAccountsController,
        TemporalKeyController,
        ModelConfigController,
        ResourcesController,
        FieldsController,
        UploadsController,
        TusController,
        LabelSetsController,
        EntitiesGroupsController,
        ProcessingStatusController,
        ProcessingRequestsController,
        ProcessingUploadsController,
        ProcessingPullController,
        SynonymsController,
        KbConfigController,
        SearchController,
        AskController,
        ActivityController,
        NotificationsController,
        EphemeralTokensController,
        UsageController,
        RemiController,
        ActivityDownloadsController,
        PresignedBlobsController,
        KbTransfersController,
        AccountBackupsController,
        // Before PredictController: its `predict/:endpoint/:kbid` would also match `predict/compat/models` and `…/compat/embeddings`.
        PredictCompatController,
        PredictController,
        KbModelsController,
      ],
      providers: [
        {
          provide: ACCESS_CLIENT,
          inject: [MESSAGE_BUS],
          useFactory: async (bus: MessageBus) => {
            const client = new AccessClient(bus, { ttlSeconds: options.accessCacheTtlSeconds, maxEntries: 50_000 });
            await client.start();
            return client;
          },
        },
        { provide: APP_GUARD, useClass: AuthGuard },
        {
          provide: BLOCKING_VIEW,
          inject: [MESSAGE_BUS],
          useFactory: async (bus: MessageBus) => {
            const view = new BlockingView(bus, { refreshMs: options.blockingRefreshMs ?? 30_000 });
            await view.start();
            return view;
          },
        },
        // After the access decision (it names the account): refuses work past an exhausted usage limit, from memory.
        { provide: APP_GUARD, useClass: QuotaGuard },
        // The predict API's calls, metered in batches (docs/usage.md).
        PredictUsage,
        UploadService,
        KbArchivesService,
        TusService,
        { provide: NOTIFICATION_LIMITS, useValue: { ...DEFAULT_NOTIFICATION_LIMITS, ...(options.notifications ?? {}) } },
        NotificationsHub,
        ProcessingUploadService,
        StagedUploadsSweeper,
        {
          provide: CORS_POLICY,
          inject: [MESSAGE_BUS],
          useFactory: async (bus: MessageBus) => {
            const policy = new CorsPolicy(bus, { globalOrigins: options.corsOrigins ?? [], cacheTtlMs: 30_000 });
            await policy.start();
            return policy;
          },
        },
      ],
      exports: [CORS_POLICY],
    };
  }
}
