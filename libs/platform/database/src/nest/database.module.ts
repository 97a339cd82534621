import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type OptionalFactoryDependency,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { closeServiceDataSource, createServiceDataSource, type ServiceDataSourceOptions } from '../data-source/service-data-source';

/** The injection token of a service's DataSource: `@Inject(dataSourceToken('content'))`. */
export function dataSourceToken(service: string): string {
  return `kb:data-source:${service}`;
}

/** Parameter decorator for the DataSource of `service`. */
export const InjectServiceDataSource = (service: string): PropertyDecorator & ParameterDecorator => Inject(dataSourceToken(service));

export type DatabaseModuleOptions =
  /** Creates the DataSource at bootstrap; the token defaults to dataSourceToken(service). */
  | { options: ServiceDataSourceOptions; token?: InjectionToken; global?: boolean }
  /** Provides a DataSource built elsewhere; the module still closes it at shutdown. */
  | { dataSource: DataSource; token: InjectionToken; global?: boolean };

export interface DatabaseModuleAsyncOptions {
  /** Required: the service name is not known before the factory runs. */
  token: InjectionToken;
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  // Nest factories receive whatever `inject` lists; the types are the caller's to declare.
  useFactory: (...deps: never[]) => ServiceDataSourceOptions | Promise<ServiceDataSourceOptions>;
  global?: boolean;
}

let moduleInstances = 0;

/** Closes one DataSource when the application shuts down (app.close() or a handled signal). */
class DataSourceCloser implements OnApplicationShutdown {
  constructor(private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    await closeServiceDataSource(this.dataSource);
  }
}

/**
 * One DataSource per service under its own token, so in the standalone process every service
 * keeps its own pool and schema while sharing one embedded database.
 */
@Module({})
export class DatabaseModule {
  static forRoot(config: DatabaseModuleOptions): DynamicModule {
    const token = 'dataSource' in config ? config.token : (config.token ?? dataSourceToken(config.options.service));
    const factory = 'dataSource' in config ? () => config.dataSource : () => createServiceDataSource(config.options);
    return DatabaseModule.build(token, { useFactory: factory, inject: [] }, [], config.global);
  }

  static forRootAsync(config: DatabaseModuleAsyncOptions): DynamicModule {
    const factory = async (...deps: never[]) => createServiceDataSource(await config.useFactory(...deps));
    return DatabaseModule.build(config.token, { useFactory: factory, inject: config.inject ?? [] }, config.imports ?? [], config.global);
  }

  private static build(
    token: InjectionToken,
    source: { useFactory: (...deps: never[]) => DataSource | Promise<DataSource>; inject: DatabaseModuleAsyncOptions['inject'] },
    imports: NonNullable<ModuleMetadata['imports']>,
    global = false,
  ): DynamicModule {
    // Unique per call: Nest identifies dynamic modules by a hash of their metadata, in which two
    // symbol tokens with one description, or two identical factories, would look the same.
    const closerToken = `kb:data-source-closer:${++moduleInstances}`;
    return {
      module: DatabaseModule,
      global,
      imports,
      providers: [
        { provide: token, useFactory: source.useFactory, inject: source.inject },
        { provide: closerToken, useFactory: (ds: DataSource) => new DataSourceCloser(ds), inject: [token] },
      ],
      exports: [token],
    };
  }
}
