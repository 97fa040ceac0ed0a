import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { PrincipalType, Scope } from '../../common/auth-context/access';

@Entity('api_key')
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id!: string;

  /** SHA-256 (hex) of the key; the plaintext is never stored. */
  @Index('api_key_hash_key', { unique: true })
  @Column({ name: 'key_hash', type: 'text' })
  keyHash!: string;

  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix!: string;

  @Column({ name: 'principal_type', type: 'text' })
  principalType!: PrincipalType;

  @Column({ name: 'principal_id', type: 'text', collation: 'C' })
  principalId!: string;

  @Column({ type: 'text', array: true })
  scopes!: Scope[];

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ name: 'created_by_role', type: 'text' })
  createdByRole!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt!: Date | null;
}
