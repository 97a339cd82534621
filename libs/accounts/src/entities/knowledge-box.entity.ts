import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { KbState } from '@kb/contracts';

@Entity({ schema: 'accounts', name: 'knowledge_boxes' })
export class KnowledgeBoxEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId!: string;
  @Column({ type: 'text' }) slug!: string;
  @Column({ type: 'text', default: '' }) title!: string;
  @Column({ type: 'text', default: '' }) description!: string;
  @Column({ type: 'text', default: 'PUBLISHED' }) state!: KbState;
  @Column({ type: 'text' }) zone!: string;
  @Column({ type: 'jsonb', name: 'allowed_origins', default: () => "'[]'" }) allowedOrigins!: string[];
  @Column({ type: 'jsonb', name: 'search_configs', default: () => "'{}'" }) searchConfigs!: Record<string, unknown>;
  @Column({ type: 'text', name: 'external_index_provider', nullable: true }) externalIndexProvider!: string | null;
  @Column({ type: 'jsonb', name: 'learning_configuration', default: () => "'{}'" }) learningConfiguration!: Record<string, unknown>;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}
