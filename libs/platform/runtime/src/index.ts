export * from './runtime-env';
export * from './runtime-bus';
export * from './runtime-http';
export * from './service-app';
