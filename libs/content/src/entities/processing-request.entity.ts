import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One processing job of a field (spec 2.7 "Processing status record"): written with the write
 * that schedules the job (same statement or transaction as its outbox row), completed when the
 * result lands. Deleted with its resource.
 */
@Entity({ schema: 'content', name: 'processing_requests' })
export class ProcessingRequestEntity {
  @PrimaryColumn({ type: 'text', name: 'processing_id' }) processingId!: string;
  @Column({ type: 'uuid' }) kbid!: string;
  @Column({ type: 'uuid' }) rid!: string;
  @Column({ type: 'text', name: 'field_type' }) fieldType!: string;
  @Column({ type: 'text', name: 'field_id' }) fieldId!: string;
  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } }) seqid!: number;
  @Column({ type: 'text', default: '' }) title!: string;
  @Column({ type: 'text', array: true, default: () => "'{}'" }) labels!: string[];
  @Column({ type: 'timestamptz', name: 'scheduled_at' }) scheduledAt!: Date;
  @Column({ type: 'timestamptz', name: 'completed_at', nullable: true }) completedAt?: Date | null;
  @Column({ type: 'boolean', default: false }) failed!: boolean;
  @Column({ type: 'integer', default: 0 }) retries!: number;
  /** The webhook called when the job completes (a push's), or null. */
  @Column({ type: 'jsonb', nullable: true }) webhook?: { uri: string; headers?: Record<string, string>; client: string } | null;
  /** Order of completion for Pull, assigned after the completion committed (ProcessingPullService). */
  @Column({
    type: 'bigint',
    name: 'completion_seq',
    nullable: true,
    transformer: { to: (v: number | null | undefined) => v, from: (v: string | null) => (v === null ? null : Number(v)) },
  })
  completionSeq?: number | null;
  /** The understanding-API client whose key scheduled the job (a push), or null: its processing is metered under that key. */
  @Column({ type: 'uuid', name: 'nua_key_id', nullable: true }) nuaKeyId?: string | null;
  /** The error of a failed job (`code_str: body`), empty otherwise. */
  @Column({ type: 'text', nullable: true }) response?: string | null;
}
