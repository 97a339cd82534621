import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { KbRole } from '@kb/contracts';

@Entity({ schema: 'accounts', name: 'service_accounts' })
export class ServiceAccountEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'uuid', name: 'account_id' }) accountId!: string;
  @Column({ type: 'uuid', name: 'kb_id' }) kbId!: string;
  @Column({ type: 'text', default: '' }) title!: string;
  @Column({ type: 'text' }) role!: KbRole;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
}
