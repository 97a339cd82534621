import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { ACCOUNTS_DATA_SOURCE } from '../accounts.tokens';
import { SecretCredentialEntity, type SecretCredentialKind } from '../entities/secret-credential.entity';
import { ServiceAccountEntity } from '../entities/service-account.entity';

@Injectable()
export class ServiceAccountsRepository {
  constructor(@Inject(ACCOUNTS_DATA_SOURCE) private readonly ds: DataSource) {}

  find(kbId: string, saId: string): Promise<ServiceAccountEntity | null> {
    return this.ds.getRepository(ServiceAccountEntity).findOneBy({ id: saId, kbId });
  }

  findById(saId: string): Promise<ServiceAccountEntity | null> {
    return this.ds.getRepository(ServiceAccountEntity).findOneBy({ id: saId });
  }

  listByKb(kbId: string): Promise<ServiceAccountEntity[]> {
    return this.ds.getRepository(ServiceAccountEntity).find({ where: { kbId }, order: { createdAt: 'ASC' } });
  }

  async insert(sa: ServiceAccountEntity, manager?: EntityManager): Promise<void> {
    await (manager ?? this.ds.manager).insert(ServiceAccountEntity, sa);
  }

  /** Deletes the account and its keys in the caller's transaction; returns the ids of the revoked keys. */
  async delete(saId: string, m: EntityManager): Promise<string[]> {
    const keys = await m.find(SecretCredentialEntity, { where: { ownerId: saId, kind: 'api_key' }, select: { id: true } });
    await m.delete(SecretCredentialEntity, { ownerId: saId, kind: 'api_key' });
    await m.delete(ServiceAccountEntity, { id: saId });
    return keys.map((k) => k.id);
  }

  /** Keys of every service account of a KB (for revocation when the KB goes). */
  async keyIdsOfKb(kbId: string): Promise<string[]> {
    const sas = await this.listByKb(kbId);
    if (sas.length === 0) return [];
    const keys = await this.ds
      .getRepository(SecretCredentialEntity)
      .find({ where: { ownerId: In(sas.map((s) => s.id)), kind: 'api_key' }, select: { id: true } });
    return keys.map((k) => k.id);
  }

  listKeys(ownerIds: string[]): Promise<SecretCredentialEntity[]> {
    if (ownerIds.length === 0) return Promise.resolve([]);
    return this.ds
      .getRepository(SecretCredentialEntity)
      .find({ where: { ownerId: In(ownerIds), kind: 'api_key' }, order: { createdAt: 'ASC' } });
  }

  findCredential(id: string, kind: SecretCredentialKind): Promise<SecretCredentialEntity | null> {
    return this.ds.getRepository(SecretCredentialEntity).findOneBy({ id, kind });
  }

  async insertCredential(credential: SecretCredentialEntity, manager?: EntityManager): Promise<void> {
    await (manager ?? this.ds.manager).insert(SecretCredentialEntity, credential);
  }

  async deleteCredential(id: string, ownerId: string, m: EntityManager): Promise<boolean> {
    const result = await m.delete(SecretCredentialEntity, { id, ownerId });
    return (result.affected ?? 0) > 0;
  }
}
