import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { MESSAGE_BUS, type MessageBus } from './message-bus';

export type MessageBusSource = MessageBus | (() => MessageBus | Promise<MessageBus>);

/**
 * Provides MESSAGE_BUS to every module of the application (global), so all root modules of the
 * standalone process share one bus, and closes it on shutdown (enableShutdownHooks()).
 */
@Module({})
export class MessagingModule implements OnApplicationShutdown {
  constructor(@Inject(MESSAGE_BUS) private readonly bus: MessageBus) {}

  static forRoot(source: MessageBusSource): DynamicModule {
    return {
      module: MessagingModule,
      global: true,
      providers: [{ provide: MESSAGE_BUS, useFactory: async () => (typeof source === 'function' ? source() : source) }],
      exports: [MESSAGE_BUS],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}
