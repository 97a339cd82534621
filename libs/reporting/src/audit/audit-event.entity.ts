import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One activity event (spec 6.1); the table is partitioned by month (migration 1764100000000). */
@Entity({ schema: 'reporting', name: 'activity_events' })
export class AuditEventEntity {
  @PrimaryColumn({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } }) id!: number;
  @Column({ type: 'text', name: 'event_id' }) eventId!: string;
  @Column({ type: 'uuid' }) kbid!: string;
  @Column({ type: 'text' }) type!: string;
  @PrimaryColumn({ type: 'timestamptz' }) date!: Date;
  @Column({ type: 'text', name: 'user_id', nullable: true }) userId!: string | null;
  @Column({ type: 'text', name: 'user_type', nullable: true }) userType!: string | null;
  @Column({ type: 'text', name: 'client_type', nullable: true }) clientType!: string | null;
  @Column({ type: 'integer', name: 'total_duration', nullable: true }) totalDuration!: number | null;
  @Column({ type: 'text', name: 'resource_id', nullable: true }) resourceId!: string | null;
  @Column({ type: 'jsonb', name: 'audit_metadata', default: () => "'{}'" }) auditMetadata!: Record<string, unknown>;
  @Column({ type: 'jsonb', default: () => "'{}'" }) details!: Record<string, unknown>;
  @Column({ type: 'text', name: 'learning_id', nullable: true }) learningId!: string | null;
  @Column({ type: 'jsonb', nullable: true }) feedback!: Record<string, unknown> | null;
}
