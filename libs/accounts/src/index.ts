export * from './accounts.module';
export * from './accounts.tokens';
export * from './bootstrap/bootstrap.service';
export { ACCOUNTS_ENTITIES } from './entities';
export { ACCOUNTS_MIGRATIONS } from './migrations';
export { signUserToken } from './credentials/user-tokens';
