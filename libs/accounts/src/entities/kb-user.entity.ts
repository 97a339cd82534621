import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { KbRole } from '@kb/contracts';

@Entity({ schema: 'accounts', name: 'kb_users' })
export class KbUserEntity {
  @PrimaryColumn('uuid', { name: 'kb_id' }) kbId!: string;
  @PrimaryColumn('uuid', { name: 'user_id' }) userId!: string;
  @Column({ type: 'text' }) role!: KbRole;
}
