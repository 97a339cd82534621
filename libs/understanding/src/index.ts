export * from './understanding.module';
export * from './understanding.tokens';
