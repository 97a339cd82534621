import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ContentFieldType, FieldError, ResourceStatus } from '@kb/contracts';

@Entity({ schema: 'content', name: 'fields' })
export class FieldEntity {
  @PrimaryColumn('uuid') rid!: string;
  @PrimaryColumn({ type: 'text', name: 'field_type' }) fieldType!: ContentFieldType;
  @PrimaryColumn({ type: 'text', name: 'field_id' }) fieldId!: string;
  @Column({ type: 'uuid' }) kbid!: string;
  @Column({ type: 'jsonb' }) value!: Record<string, unknown>;
  @Column({ type: 'jsonb', nullable: true }) extracted!: Record<string, unknown> | null;
  @Column({ type: 'text', default: 'PENDING' }) status!: ResourceStatus;
  @Column({ type: 'jsonb', nullable: true }) error!: FieldError | null;
  @Column({ type: 'jsonb', default: () => "'[]'" }) errors!: FieldError[];
  /** Sequence of the write that last changed the value: older processing results are ignored. */
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } }) seqid!: number;
  @Column({ type: 'timestamptz', name: 'modified_at' }) modifiedAt!: Date;
  /**
   * Blobs the field's last applied processing result stored (extracted JSON, thumbnail), by key,
   * with their bytes as written. Left out of a field's write (a pending write keeps them: they stay
   * in the store until the next result replaces them).
   */
  @Column({ type: 'jsonb', default: () => "'{}'" }) artefacts?: Record<string, number>;
  /** Message attachments a push stored under this (conversation) field, by key, with their measured bytes. */
  @Column({ type: 'jsonb', default: () => "'{}'" }) attachments?: Record<string, number>;
}
