export * from './logger';
export * from './metrics';
export * from './health';
export * from './observability.module';
