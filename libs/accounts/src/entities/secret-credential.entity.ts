import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * API keys, personal access tokens (and later UA keys) share one table: a credential is an id,
 * a salted hash of its secret, an owner and an expiry. The secret itself is never stored.
 */
export type SecretCredentialKind = 'api_key' | 'pat' | 'ua_key';

@Entity({ schema: 'accounts', name: 'secret_credentials' })
export class SecretCredentialEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'text' }) kind!: SecretCredentialKind;
  /** Service account (api_key), user (pat) or understanding-API client (ua_key). */
  @Column({ type: 'uuid', name: 'owner_id' }) ownerId!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'text' }) salt!: string;
  @Column({ type: 'text', name: 'secret_hash' }) secretHash!: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt!: Date;
}
