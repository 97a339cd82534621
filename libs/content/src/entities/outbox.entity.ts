import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { OutboxKind, OutboxRow } from '@kb/platform/outbox';

/** The row kinds content writes: bus messages, and `blob_cleanup` (the target is a blob prefix to delete, or one key when it does not end with `/`). */
export type ContentOutboxKind = 'queue' | 'event' | 'blob_cleanup';

/**
 * Content's outbox table (the transactional outbox of @kb/platform/outbox): work decided inside a
 * database transaction but carried out outside it (bus messages, blob deletion). Written in the
 * same transaction as the change, relayed after commit, deleted once done: a crash between commit
 * and relay loses nothing, it is relayed at the next sweep.
 */
@Entity({ schema: 'content', name: 'outbox' })
export class OutboxEntity implements OutboxRow {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'text' }) kind!: OutboxKind;
  /** Bus subject, or the blob prefix to delete. */
  @Column({ type: 'text' }) target!: string;
  @Column({ type: 'jsonb', default: () => "'{}'" }) payload!: Record<string, unknown>;
  @Column({ type: 'integer', default: 0 }) attempts!: number;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'next_attempt_at' }) nextAttemptAt!: Date;
}
