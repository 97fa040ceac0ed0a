import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('venue')
export class VenueEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  /** Display only: uniqueness is not enforced, and URLs never use it. */
  @Column({ type: 'text', nullable: true })
  slug!: string | null;

  /** Locale code (uppercase) to text, like an event's title. */
  @Column({ type: 'jsonb', nullable: true })
  description!: Record<string, string> | null;

  @Column({ name: 'website_url', type: 'text', nullable: true })
  websiteUrl!: string | null;

  @Column({ type: 'text', nullable: true })
  category!: string | null;

  @Column({ name: 'claim_status', type: 'text', nullable: true })
  claimStatus!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;
}
