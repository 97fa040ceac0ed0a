import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('organiser')
export class OrganiserEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  /** An unclaimed placeholder business: its unlisted events are visible to venue keys. */
  @Column({ type: 'boolean', default: false })
  placeholder!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}
