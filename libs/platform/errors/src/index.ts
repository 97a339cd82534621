export * from './error-status';
export * from './http-exception.filter';
