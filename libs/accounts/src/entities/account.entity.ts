import { Column, Entity, PrimaryColumn } from 'typeorm';

export interface SamlConfig {
  domains: string[];
  sso_url: string;
  entity_id: string;
  x509_cert: string;
  authn_context?: string;
}

@Entity({ schema: 'accounts', name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'text', unique: true }) slug!: string;
  @Column({ type: 'text', default: '' }) title!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'text', default: 'stash-trial' }) type!: string;
  @Column({ type: 'text', nullable: true }) domain!: string | null;
  @Column({ type: 'text', name: 'blocking_state', default: 'unblocked' }) blockingState!: string;
  @Column({ type: 'jsonb', name: 'blocked_features', default: () => "'[]'" }) blockedFeatures!: string[];
  @Column({ type: 'integer', name: 'max_kbs', default: 10 }) maxKbs!: number;
  @Column({ type: 'integer', name: 'max_users', default: 25 }) maxUsers!: number;
  @Column({ type: 'jsonb', default: () => "'{}'" }) limits!: Record<string, unknown>;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'trial_expiration_date', nullable: true }) trialExpirationDate!: Date | null;
  /** {domains, sso_url, entity_id, x509_cert, authn_context} — the identity provider of this account. */
  @Column({ type: 'jsonb', name: 'saml_config', nullable: true }) samlConfig!: SamlConfig | null;
  @Column({ type: 'text', name: 'saml_entity_id', nullable: true }) samlEntityId!: string | null;
  @Column({ type: 'text', name: 'saml_sso_url', nullable: true }) samlSsoUrl!: string | null;
  @Column({ type: 'text', name: 'saml_x509_cert', nullable: true }) samlX509Cert!: string | null;
}
