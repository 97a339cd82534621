import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'accounts', name: 'users' })
export class UserEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'text', unique: true }) email!: string;
  @Column({ type: 'text', default: '' }) name!: string;
  /** scrypt hash with its parameters and salt; null for users who only sign in through SSO. */
  @Column({ type: 'text', name: 'password_hash', nullable: true }) passwordHash!: string | null;
  @Column({ type: 'text', default: 'USER' }) type!: string;
  @Column({ type: 'text', nullable: true }) language!: string | null;
  @Column({ type: 'text', nullable: true }) avatar!: string | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'last_login', nullable: true }) lastLogin!: Date | null;
  /** When the user proved they read this address (a verification link, a mailed invitation, a verified SSO domain); null: unproven. */
  @Column({ type: 'timestamptz', name: 'email_verified_at', nullable: true }) emailVerifiedAt!: Date | null;
}
