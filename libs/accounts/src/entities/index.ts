import { AccountUserEntity } from './account-user.entity';
import { AccountEntity } from './account.entity';
import { KbUserEntity } from './kb-user.entity';
import { KnowledgeBoxEntity } from './knowledge-box.entity';
import { SecretCredentialEntity } from './secret-credential.entity';
import { ServiceAccountEntity } from './service-account.entity';
import { UserEntity } from './user.entity';

export { AccountUserEntity, AccountEntity, KbUserEntity, KnowledgeBoxEntity, SecretCredentialEntity, ServiceAccountEntity, UserEntity };

export const ACCOUNTS_ENTITIES = [
  UserEntity,
  AccountEntity,
  AccountUserEntity,
  KnowledgeBoxEntity,
  KbUserEntity,
  ServiceAccountEntity,
  SecretCredentialEntity,
];
