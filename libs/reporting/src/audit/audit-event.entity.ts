import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'reporting', name: 'audit_events' })
export class AuditEventEntity {
  @PrimaryColumn({ type: 'bigint', generated: 'increment', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } }) id!: number;
  @Column({ type: 'text', name: 'event_id', unique: true }) eventId!: string;
  @Column({ type: 'uuid' }) kbid!: string;
  @Column({ type: 'text' }) type!: string;
  @Column({ type: 'timestamptz' }) date!: Date;
  @Column({ type: 'text', name: 'user_id', nullable: true }) userId!: string | null;
  @Column({ type: 'text', name: 'user_type', nullable: true }) userType!: string | null;
  @Column({ type: 'text', name: 'client_type', nullable: true }) clientType!: string | null;
  @Column({ type: 'integer', name: 'total_duration', nullable: true }) totalDuration!: number | null;
  @Column({ type: 'text', name: 'resource_id', nullable: true }) resourceId!: string | null;
  @Column({ type: 'jsonb', name: 'audit_metadata', default: () => "'{}'" }) auditMetadata!: Record<string, unknown>;
}
