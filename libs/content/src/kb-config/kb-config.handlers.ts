import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ContentSubjects } from '@kb/contracts';
import { MESSAGE_BUS, type MessageBus } from '@kb/platform/messaging';
import { KbConfigsService } from './kb-configs.service';

/** The bus subjects of a KB's saved configurations (search configurations, key-value schemas, strategies). */
@Injectable()
export class KbConfigHandlers implements OnModuleInit {
  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly configs: KbConfigsService,
  ) {}

  async onModuleInit(): Promise<void> {
    const S = ContentSubjects;
    await Promise.all([
      this.bus.handle(S.listSearchConfigurations, (req) => this.configs.listSearch(req.kbid)),
      this.bus.handle(S.getSearchConfiguration, (req) => this.configs.getSearch(req.kbid, req.name)),
      this.bus.handle(S.createSearchConfiguration, (req) => this.configs.createSearch(req.kbid, req.name, req.body)),
      this.bus.handle(S.updateSearchConfiguration, (req) => this.configs.updateSearch(req.kbid, req.name, req.body)),
      this.bus.handle(S.deleteSearchConfiguration, (req) => this.configs.deleteSearch(req.kbid, req.name)),
      this.bus.handle(S.listKvSchemas, (req) => this.configs.listKv(req.kbid)),
      this.bus.handle(S.getKvSchema, (req) => this.configs.getKv(req.kbid, req.schema_id)),
      this.bus.handle(S.createKvSchema, (req) => this.configs.createKv(req.kbid, req.body)),
      this.bus.handle(S.updateKvSchema, (req) => this.configs.updateKv(req.kbid, req.schema_id, req.body)),
      this.bus.handle(S.deleteKvSchema, (req) => this.configs.deleteKv(req.kbid, req.schema_id)),
      this.bus.handle(S.listStrategies, (req) => this.configs.listStrategies(req.kbid, req.kind)),
      this.bus.handle(S.getStrategy, (req) => this.configs.getStrategy(req.kbid, req.kind, req.strategy_id)),
      this.bus.handle(S.createStrategy, (req) => this.configs.createStrategy(req.kbid, req.kind, req.body)),
      this.bus.handle(S.deleteStrategy, (req) => this.configs.deleteStrategy(req.kbid, req.kind, req.strategy_id)),
      this.bus.handle(S.resolveStrategies, (req) => this.configs.resolveStrategies(req.kbid, req)),
    ]);
  }
}
