import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { OnlineMeeting, Planning, Visibility } from '../../../libs/event-rules';

/**
 * The stored event: wider than the public Event shape. Every EventPatch
 * field, plus server-owned fields the API never writes.
 *
 * Orders keep a copy of their event's owner (`order.organizer_id`, so the
 * organiser's order list is one index scan). Two triggers that the Orders
 * migration (1763900004000-Orders) installs on this table keep that copy
 * right: deleting an event detaches its orders (`event_id` and
 * `organizer_id` become null), and changing `organizer_id` moves its orders
 * to the new owner. Orders creates an order under EventsService.lockOwner's
 * share lock, so neither can miss an order being created.
 */
@Entity('event')
export class EventEntity {
  @PrimaryColumn({ type: 'text', collation: 'C' }) id!: string;
  @Column({ name: 'organizer_id', type: 'text', collation: 'C', nullable: true }) organizerId!: string | null;
  /** Null reads as `draft`. */
  @Column({ type: 'text', nullable: true }) visibility!: Visibility | null;
  @Column({ type: 'jsonb', nullable: true }) title!: Record<string, string> | null;
  @Column({ type: 'jsonb', nullable: true }) description!: Record<string, string> | null;
  @Column({ name: 'start_time', type: 'timestamptz', precision: 3, nullable: true }) startTime!: Date | null;
  @Column({ name: 'end_time', type: 'timestamptz', precision: 3, nullable: true }) endTime!: Date | null;
  @Column({ name: 'date_only', type: 'boolean', default: false }) dateOnly!: boolean;
  @Column({ name: 'location_id', type: 'text', collation: 'C', nullable: true }) locationId!: string | null;
  @Column({ name: 'additional_location_ids', type: 'text', array: true, default: () => `'{}'` })
  additionalLocationIds!: string[];
  @Column({ type: 'jsonb', nullable: true }) planning!: Planning | null;
  @Column({ name: 'online_meeting', type: 'jsonb', nullable: true }) onlineMeeting!: OnlineMeeting | null;
  @Column({ name: 'image_blob_name', type: 'text', nullable: true }) imageBlobName!: string | null;
  @Column({ name: 'image_blob_names', type: 'text', array: true, nullable: true }) imageBlobNames!: string[] | null;
  @Column({ type: 'text', array: true, nullable: true }) tags!: string[] | null;
  @Column({ type: 'text', array: true, nullable: true }) subtags!: string[] | null;
  @Column({ type: 'text', array: true, nullable: true }) languages!: string[] | null;
  @Column({ type: 'jsonb', nullable: true }) metadata!: Record<string, unknown> | null;
  @Column({ name: 'theme_color', type: 'text', nullable: true }) themeColor!: string | null;
  @Column({ name: 'secondary_theme_color', type: 'text', nullable: true }) secondaryThemeColor!: string | null;
  @Column({ name: 'background_style', type: 'text', nullable: true }) backgroundStyle!: string | null;
  @Column({ name: 'color_mode', type: 'text', nullable: true }) colorMode!: string | null;
  @Column({ name: 'background_color', type: 'text', nullable: true }) backgroundColor!: string | null;
  @Column({ name: 'heading_font', type: 'text', nullable: true }) headingFont!: string | null;
  @Column({ name: 'title_font_scale', type: 'double precision', nullable: true }) titleFontScale!: number | null;
  @Column({ name: 'background_primary_color', type: 'text', nullable: true }) backgroundPrimaryColor!: string | null;
  @Column({ name: 'background_params', type: 'jsonb', nullable: true }) backgroundParams!: Record<
    string,
    unknown
  > | null;
  @Column({ name: 'plasma_preset', type: 'jsonb', nullable: true }) plasmaPreset!: Record<string, unknown> | null;
  @Column({ name: 'hide_location', type: 'boolean', default: false }) hideLocation!: boolean;
  @Column({ name: 'hide_related_events', type: 'boolean', default: false }) hideRelatedEvents!: boolean;
  @Column({ name: 'group_size_override', type: 'jsonb', nullable: true }) groupSizeOverride!: Record<
    string,
    unknown
  > | null;
  @Column({ name: 'series_id', type: 'text', nullable: true }) seriesId!: string | null;
  @Column({ type: 'jsonb', nullable: true }) links!: Record<string, unknown>[] | null;
  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 }) createdAt!: Date;
  /** Moves on every write of any kind, including ones the API does not expose. */
  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 }) updatedAt!: Date;
  @Column({ name: 'first_published_at', type: 'timestamptz', precision: 3, nullable: true })
  firstPublishedAt!: Date | null;
  @Column({ name: 'venue_id', type: 'text', collation: 'C', nullable: true }) venueId!: string | null;
  /** Set by a date or venue move saved with `refundOfferOnChange: true`. */
  @Column({ name: 'refund_offer', type: 'jsonb', nullable: true }) refundOffer!: Record<string, unknown> | null;
}
