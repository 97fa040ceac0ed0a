import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('venue_location')
export class VenueLocationEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id!: string;

  @Column({ name: 'venue_id', type: 'text', collation: 'C' })
  venueId!: string;

  @Column({ name: 'display_name', type: 'text', nullable: true })
  displayName!: string | null;

  @Column({ type: 'text', nullable: true })
  address!: string | null;

  @Column({ type: 'text', nullable: true })
  city!: string | null;

  @Column({ type: 'text', nullable: true })
  country!: string | null;

  /** IANA zone; what "noon in the venue's time zone" of `dateOnly` uses. Not part of the public Venue shape. */
  @Column({ name: 'time_zone', type: 'text', default: 'UTC' })
  timeZone!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  /** Soft delete: a deleted location is omitted from the venue record from then on. */
  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true })
  deletedAt!: Date | null;
}
