import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ResourceStatus } from '@kb/contracts';

@Entity({ schema: 'content', name: 'resources' })
export class ResourceEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'uuid' }) kbid!: string;
  @Column({ type: 'text' }) slug!: string;
  @Column({ type: 'text', default: '' }) title!: string;
  @Column({ type: 'text', default: '' }) summary!: string;
  @Column({ type: 'text', default: '' }) icon!: string;
  @Column({ type: 'text', default: '' }) thumbnail!: string;
  @Column({ type: 'jsonb', default: () => "'{}'" }) metadata!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) usermetadata!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'[]'" }) fieldmetadata!: Record<string, unknown>[];
  @Column({ type: 'jsonb', default: () => "'{}'" }) computedmetadata!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) origin!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) extra!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'[]'" }) relations!: Record<string, unknown>[];
  @Column({ type: 'jsonb', name: 'access_groups', default: () => "'[]'" }) accessGroups!: string[];
  @Column({ type: 'boolean', default: false }) hidden!: boolean;
  /** Resource-level filter tags (search index); written with the row, kept in step by the indexer. */
  @Column({ type: 'text', array: true, name: 'search_tags', default: () => "'{}'", select: false, insert: true, update: false })
  searchTags?: string[];
  @Column({ type: 'text', default: 'PENDING' }) status!: ResourceStatus;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'modified_at' }) modifiedAt!: Date;
  @Column({
    type: 'bigint',
    name: 'last_seqid',
    transformer: { to: (v: number) => v, from: (v: string | null) => (v === null ? 0 : Number(v)) },
  })
  lastSeqid!: number;
}
