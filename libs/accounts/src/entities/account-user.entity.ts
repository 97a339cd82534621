import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AccountRole } from '@kb/contracts';

@Entity({ schema: 'accounts', name: 'account_users' })
export class AccountUserEntity {
  @PrimaryColumn('uuid', { name: 'account_id' }) accountId!: string;
  @PrimaryColumn('uuid', { name: 'user_id' }) userId!: string;
  @Column({ type: 'text' }) role!: AccountRole;
}
